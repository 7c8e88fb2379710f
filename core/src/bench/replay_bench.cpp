// `bench --replay`: what replaying a capsule costs, measured on runs recorded for the purpose into
// a temporary folder.
#include "nanscope/bench.h"

#include "nanscope/replay.h"
#include "nanscope/run_recorder.h"
#include "nanscope/session.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace nanscope {

namespace {

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

void record(const RunConfig &config, const std::string &path)
{
    Session session;
    RunRecorder recorder(path);
    session.addObserver(&recorder);
    std::string error;
    if (!session.start(config, &error))
        throw std::runtime_error(error);
    session.wait();
    session.removeObserver(&recorder);
    recorder.close();
}

}  // namespace

ReplayBenchResult benchReplay(int rounds, const std::function<void(const std::string &)> &progress)
{
    namespace fs = std::filesystem;
    const fs::path folder = fs::temp_directory_path() / ("nanscope-replay-bench-" + std::to_string(getpid()));
    fs::create_directories(folder);
    ReplayBenchResult result;
    result.rounds = rounds;
    try {
        progress("recording safe-training");
        RunConfig stable;
        stable.scenario = "safe-training";
        stable.steps = 26;
        stable.capsuleSteps = {25};
        const std::string stablePath = (folder / "stable.nsrun").string();
        record(stable, stablePath);
        ReplayOptions options;
        options.step = 25;
        options.samples = options.whatIf = false;
        std::vector<double> load, replay, total;
        progress("replaying its step 25");
        for (int r = 0; r < rounds; ++r) {
            const ReplayReport report = replayCapsule(stablePath, options);
            if (report.verdict != ReplayVerdict::Reproduced)
                throw std::runtime_error("the benchmark's own capsule did not reproduce");
            load.push_back(report.loadMillis);
            replay.push_back(report.replayMillis);
            total.push_back(report.totalMillis);
        }
        result.loadMs = median(load);
        result.replayMs = median(replay);
        result.totalMs = median(total);

        for (int batch : {8, 32, 128, 500}) {
            progress("bisecting nan-input's batch of " + std::to_string(batch));
            RunConfig bad;
            bad.scenario = "nan-input";
            bad.batchSize = batch;
            bad.steps = 500 / batch + 1;  // an epoch: a batch holds sample 10 or 50
            const std::string path = (folder / ("nan-input-" + std::to_string(batch) + ".nsrun")).string();
            record(bad, path);
            ReplayOptions o;
            o.whatIf = false;
            const ReplayReport report = replayCapsule(path, o);
            result.bisection.push_back({batch, report.bisectReplays, int(report.samples.size())});
        }
    } catch (...) {
        fs::remove_all(folder);
        throw;
    }
    fs::remove_all(folder);
    return result;
}

}  // namespace nanscope
