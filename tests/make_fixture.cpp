// Writes one of the test fixtures to a file, for trying the command line by hand and for
// benchmarks: `make_fixture cnn /tmp/resnet18ish.pt`, `make_fixture truncated /tmp/bad.pt`.
#include "torchscript_fixtures.h"

#include <exception>
#include <iostream>
#include <string>

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::cerr << "usage: make_fixture nested|forward-nan|backward-nan|bad-weights|cnn|empty|truncated|not-zip|"
                     "random|newer-version PATH\n";
        return 2;
    }
    const std::string kind = argv[1];
    try {
        if (kind == "empty" || kind == "truncated" || kind == "not-zip" || kind == "random" || kind == "newer-version")
            nanscope::fixtures::writeBadFile(kind, argv[2]);
        else
            nanscope::fixtures::writeModel(kind, argv[2]);
    } catch (const std::exception &e) {
        std::cerr << "make_fixture: " << e.what() << '\n';
        return 1;
    }
    return 0;
}
