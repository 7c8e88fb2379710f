// nanscope_format FILE: writes the run file's format definition (nanscope/run_file_format.h) to
// FILE; nanscope_format --check FILE: exit 1, naming the first line that differs, when FILE is not
// what this build would write. The Python recorder's python/nanscope/format.json is kept this way.
#include "nanscope/run_file_format.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace {

int check(const char *path, const std::string &expected)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "nanscope_format: %s: cannot be read\n", path);
        return 1;
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (text.str() == expected)
        return 0;
    std::istringstream a(text.str()), b(expected);
    std::string la, lb;
    int line = 1;
    while (std::getline(a, la) && std::getline(b, lb) && la == lb)
        ++line;
    std::fprintf(stderr,
                 "nanscope_format: %s is not the format this build writes (line %d differs); "
                 "update it with `cmake --build BUILD --target python-format`\n",
                 path, line);
    return 1;
}

}  // namespace

int main(int argc, char **argv)
{
    const bool checking = argc == 3 && std::strcmp(argv[1], "--check") == 0;
    if (argc != 2 && !checking) {
        std::fprintf(stderr, "usage: nanscope_format [--check] FILE\n");
        return 2;
    }
    const std::string definition = nanscope::runFileFormatJson();
    if (checking)
        return check(argv[2], definition);
    std::ofstream out(argv[1], std::ios::binary);
    out << definition;
    if (!out.flush()) {
        std::fprintf(stderr, "nanscope_format: %s: cannot be written\n", argv[1]);
        return 1;
    }
    return 0;
}
