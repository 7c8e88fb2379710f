// nanscope built without Qt (a server, or a GPU machine with only a pip LibTorch; the Debian package
// nanscope-headless): the headless commands alone. Run files it records open in a window elsewhere.
#include "cli.h"

#include "nanscope/allocator.h"

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

void printHelp(std::ostream &out)
{
    out << "usage: nanscope COMMAND [OPTIONS]\n"
           "Find where, when and why NaN and Inf appear in training (this build has no window: run files\n"
           "it records open in the window of a full NaNScope elsewhere).\n"
           "Headless: nanscope "
        << nanscope::cli::subcommandList()
        << " (each with --help)\n"
           "  -h, --help     this help\n"
           "  --version      the version, and the LibTorch it was built with\n";
}

}  // namespace

int main(int argc, char **argv)
{
    nanscope::keepFreedTensorMemory();
    if (argc > 1 && nanscope::cli::isSubcommand(argv[1]))
        return nanscope::cli::runSubcommand(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
    if (argc == 2 && (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h"))) {
        printHelp(std::cout);
        return 0;
    }
    if (argc == 2 && !std::strcmp(argv[1], "--version")) {
        std::cout << nanscope::cli::versionLine("headless");
        return 0;
    }
    std::cerr << "nanscope: this build has no window (it was built without Qt 6). Headless: nanscope "
              << nanscope::cli::subcommandList() << " (each with --help)\n";
    return 2;
}
