// libFuzzer target: any bytes, opened as a run file and read end to end, end in a RunFileError or
// in data; never in a crash, a hang or a sanitizer report. SQLite reads files, so each input is
// written to one scratch file first.
#include "nanscope/run_file.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace {

std::string scratchPath()
{
    const char *dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/nanscope-fuzz-" + std::to_string(getpid()) + ".nsrun";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    static const std::string path = scratchPath();
    for (const char *suffix : {"-wal", "-shm", "-journal"})
        std::remove((path + suffix).c_str());
    if (FILE *f = std::fopen(path.c_str(), "wb")) {
        std::fwrite(data, 1, size, f);
        std::fclose(f);
    } else {
        return 0;
    }
    try {
        nanscope::RunFile file(path);
        (void)file.stats();
        int last = -1;
        for (int rounds = 0; rounds < 64; ++rounds) {  // a damaged file may hold odd step numbers
            const auto steps = file.readSteps(last, 256);
            if (steps.empty() || steps.back()->step <= last)
                break;
            last = steps.back()->step;
        }
        (void)file.lastStep();
        (void)file.readChunks(-1, 1 << 30, 256);
        (void)file.readEvents(0);
        file.refresh();
    } catch (const nanscope::RunFileError &) {
    }
    return 0;
}
