#pragma once
// Side-by-side step-time measurements of the probe's tiers (`nanscope bench`).
#include "nanscope/controls.h"
#include "nanscope/run_config.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nanscope {

struct BenchResult {
    std::string model;  // "mlp", "cnn", "deep"
    int batch = 0;
    int rounds = 0;
    double probeOffMs = 0;  // medians
    double fullMapMs = 0;
    double opLevelMs = 0;
    double recordMs = 0;           // the full map, each record handed to a RunRecorder writing a run file
    double bytesPerLayerStep = 0;  // of that run file
    double loadMs = 0;             // a model file: torch::jit::load
    double instrumentMs = 0;       // and instrumenting its graph
    double fullMapRatio() const { return fullMapMs / probeOffMs; }
    double opLevelRatio() const { return opLevelMs / probeOffMs; }
    double recordRatio() const { return recordMs / probeOffMs; }
    double recordOverMapRatio() const { return recordMs / fullMapMs; }  // what recording adds to the map
};

// The built-in benchmark models, in the order runBenchmarks measures them.
const std::vector<std::string> &benchModelNames();  // "mlp", "cnn", "deep"

// Interleaves the four variants (probe off, full map, full map recorded, op-level) round by round so that machine noise
// hits all of them alike. `device` "cpu" or "cuda" (each step then ends with a device synchronisation), in `precision`;
// `models` a subset of benchModelNames() (empty: all). Throws std::invalid_argument on an unknown one.
// `devicePathOnCpu`: see RunConfig (what the device path costs in dispatched ops, on the CPU).
std::vector<BenchResult> runBenchmarks(int rounds, const std::function<void(const std::string &)> &progress,
                                       const std::string &device = "cpu", Precision precision = Precision::FP32,
                                       const std::vector<std::string> &models = {}, bool devicePathOnCpu = false);

// The same for a user's TorchScript file (config.modelPath and its data fields).
BenchResult benchModel(const RunConfig &config, int rounds);

// What a replay costs (`bench --replay`): one StableModel step (safe-training) replayed `rounds`
// times, loading included (medians), and the replays bisecting nan-input's batch takes at each
// batch size (O(log n) a culprit).
struct ReplayBenchResult {
    int rounds = 0;
    double loadMs = 0;    // reading the capsule, rebuilding the model, restoring the state
    double replayMs = 0;  // the step computed again
    double totalMs = 0;   // replayCapsule() with neither samples nor what-ifs, the compare included
    struct Bisection {
        int batch = 0;
        int replays = 0;
        int culprits = 0;  // samples named
    };
    std::vector<Bisection> bisection;
};
// How far the rounds of an interleaved benchmark spread, and how far their median can be trusted:
// on a busy machine single rounds of the same work differ by tens of percent, and a ratio is worth
// quoting against a target only with an interval that says whether the rounds could tell.
struct RoundSpread {
    double median = 0;
    double lowQuartile = 0;
    double highQuartile = 0;
    // A 95% confidence interval of the median, from the order statistics: it assumes nothing
    // about the distribution of the rounds, only that they are independent.
    double medianLow = 0;
    double medianHigh = 0;
};

// What the map and the arbitration cost a data-parallel step (`bench --ranks N`): this rank's side
// of a job, `rounds` interleaved rounds of `stepsPerRound` steps of a plain data-parallel step
// (forward, backward, the gradient all-reduce, rank 0's buffers, the update) and of NaNScope's
// (the map, the ranks' arbitration, then the same), on benchmark model `model`. Every rank of the
// job must call it alike. Medians of each round's mean step.
struct RanksBenchResult {
    std::string model;
    int world = 0;
    std::string collectives;  // "Gloo", "NCCL on cuda:0"
    int rounds = 0;
    double plainMs = 0;
    double checkedMs = 0;
    std::int64_t arbitrationBytes = 0;  // what the arbitration adds to each step's gradient all-reduce
    // The rounds' own ratios (checked / plain, measured back to back). On a busy machine they
    // spread wide; the median ratio then needs many rounds, as its interval shows.
    RoundSpread roundRatios;
    double ratio() const { return checkedMs / plainMs; }
};
// `device`: "cpu", or "cuda" (each rank on its GPU, as a job's are).
RanksBenchResult benchRanks(const DataParallel &job, const std::string &model, int rounds, int stepsPerRound,
                            const std::string &device = "cpu");

ReplayBenchResult benchReplay(int rounds, const std::function<void(const std::string &)> &progress);

}  // namespace nanscope
