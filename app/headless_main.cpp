// nanscope built without Qt (a server, or a GPU machine with only a pip LibTorch): the headless
// commands alone. Run files it records open in a window elsewhere.
#include "cli.h"

#include "nanscope/allocator.h"

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    nanscope::keepFreedTensorMemory();
    if (argc > 1 && nanscope::cli::isSubcommand(argv[1]))
        return nanscope::cli::runSubcommand(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
    std::fprintf(stderr, "nanscope: this build has no window (Qt 6 or QCustomPlot was not found when it was built).\n"
                         "Headless: nanscope scenarios | run | report | export | diff | replay | inspect | bench (each with "
                         "--help)\n");
    return 2;
}
