#include "cli_bench.h"

#include "cli_args.h"
#include "cli_json.h"
#include "cli_model.h"
#include "cli_ranks.h"
#include "nanscope/bench.h"
#include "nanscope/synthetic_records.h"

#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <ostream>
#include <stdexcept>

namespace nanscope::cli {

namespace {

// One line of `bench --json`; a model file's line also says what loading it cost.
Json benchJson(const BenchResult &b, bool withLoading)
{
    Json j{{"type", "bench"}, {"model", b.model}, {"batch", b.batch}, {"rounds", b.rounds}};
    if (withLoading) {
        j["load_ms"] = jsonNumber(b.loadMs);
        j["instrument_ms"] = jsonNumber(b.instrumentMs);
    }
    j["probe_off_ms"] = jsonNumber(b.probeOffMs);
    j["full_map_ms"] = jsonNumber(b.fullMapMs);
    j["op_level_ms"] = jsonNumber(b.opLevelMs);
    j["record_ms"] = jsonNumber(b.recordMs);
    j["full_map_ratio"] = jsonNumber(b.fullMapRatio());
    j["op_level_ratio"] = jsonNumber(b.opLevelRatio());
    j["record_ratio"] = jsonNumber(b.recordRatio());
    j["record_over_map_ratio"] = jsonNumber(b.recordOverMapRatio());
    j["record_bytes_per_layer_step"] = jsonNumber(b.bytesPerLayerStep);
    return j;
}

int benchBuiltInModels(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    bool json = false;
    int rounds = 100;
    std::vector<std::string> models;
    Arguments arguments("bench");
    arguments.option("--rounds", [&rounds](const auto &flag, const auto &v) { rounds = parseInt(flag, v, 1); })
        .repeatable("--only", [&models](const auto &, const auto &v) { models.push_back(v); })
        .flag("--json", json);
    arguments.parse(args);
    const auto results = runBenchmarks(
        rounds,
        [&](const std::string &m) {
            if (!json)
                err << m << "...\n";
        },
        "cpu", Precision::FP32, models);
    if (!json)
        out << "median step time over " << rounds << " interleaved rounds (batch 32, 1 thread)\n"
            << "model   probe off   full map   recorded   op-level   map ratio   op ratio   record ratio  "
               "record/map  bytes/layer-step\n";
    for (const BenchResult &b : results) {
        if (json) {
            out << jsonLine(benchJson(b, false)) << '\n';
        } else {
            out << std::left << std::setw(6) << b.model << std::right << std::fixed << std::setprecision(3)
                << std::setw(9) << b.probeOffMs << "ms" << std::setw(9) << b.fullMapMs << "ms" << std::setw(9)
                << b.recordMs << "ms" << std::setw(9) << b.opLevelMs << "ms" << std::setw(11) << b.fullMapRatio() << 'x'
                << std::setw(10) << b.opLevelRatio() << 'x' << std::setw(14) << b.recordRatio() << 'x' << std::setw(11)
                << b.recordOverMapRatio() << 'x' << std::setw(14) << std::setprecision(1) << b.bytesPerLayerStep
                << '\n';
        }
    }
    return 0;
}

int benchModelFile(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    RunConfig config;
    bool json = false;
    int rounds = 10;
    Arguments arguments("bench");
    addModelOptions(arguments, config);
    arguments.option("--rounds", [&rounds](const auto &flag, const auto &v) { rounds = parseInt(flag, v, 1); })
        .flag("--json", json);
    arguments.parse(args);
    BenchResult b;
    try {
        b = benchModel(config, rounds);
    } catch (const std::exception &e) {
        std::string m = e.what();
        err << "nanscope: " << m.substr(0, m.find('\n')) << '\n';
        return 1;
    }
    if (json) {
        out << jsonLine(benchJson(b, true)) << '\n';
    } else {
        out << std::fixed << std::setprecision(2) << b.model << " (batch " << b.batch << ", " << b.rounds
            << " interleaved rounds, 1 thread)\n"
            << "load " << b.loadMs << " ms, instrument " << b.instrumentMs << " ms\n"
            << "median step: probe off " << b.probeOffMs << " ms, full map " << b.fullMapMs << " ms ("
            << std::setprecision(3) << b.fullMapRatio() << "x), op-level " << std::setprecision(2) << b.opLevelMs
            << " ms (" << std::setprecision(3) << b.opLevelRatio() << "x), recorded " << std::setprecision(2)
            << b.recordMs << " ms (" << std::setprecision(3) << b.recordRatio() << "x; " << b.recordOverMapRatio()
            << "x the map), " << std::setprecision(1) << b.bytesPerLayerStep << " bytes per layer-step\n";
    }
    return 0;
}

int benchReplayCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    bool json = false, replay = false;
    int rounds = 20;
    Arguments arguments("bench");
    arguments.flag("--replay", replay)
        .option("--rounds", [&rounds](const auto &flag, const auto &v) { rounds = parseInt(flag, v, 1); })
        .flag("--json", json);
    arguments.parse(args);
    const ReplayBenchResult r = benchReplay(rounds, [&](const std::string &m) {
        if (!json)
            err << m << "...\n";
    });
    if (json) {
        Json bisection = Json::array();
        for (const auto &b : r.bisection)
            bisection.push_back({{"batch", b.batch}, {"replays", b.replays}, {"culprits", b.culprits}});
        out << jsonLine({{"type", "bench-replay"},
                         {"rounds", r.rounds},
                         {"load_ms", jsonNumber(r.loadMs)},
                         {"replay_ms", jsonNumber(r.replayMs)},
                         {"total_ms", jsonNumber(r.totalMs)},
                         {"bisection", bisection}})
            << '\n';
        return 0;
    }
    out << std::fixed << std::setprecision(1) << "replaying one safe-training (StableModel) step, median of "
        << r.rounds << ": load " << r.loadMs << " ms, step " << r.replayMs << " ms, total " << r.totalMs << " ms\n"
        << "bisecting nan-input's batch:\n";
    for (const auto &b : r.bisection)
        out << "  batch " << std::setw(4) << b.batch << ": " << std::setw(3) << b.replays << " replays, " << b.culprits
            << " sample(s) named\n";
    return 0;
}

// `bench --ranks N` starts the job; each of its ranks (WORLD_SIZE set) measures its side, and
// rank 0 prints the result.
int benchRanksCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    bool json = false;
    // Collectives over loopback make single rounds vary by a factor of two on a busy machine: the
    // median needs a few hundred rounds to settle within a percent or two.
    int rounds = 200, ranks = 0, steps = 10;
    std::string model = "mlp", device = "cpu";
    RunConfig config;
    Arguments arguments("bench");
    arguments.option("--ranks", [&](const auto &flag, const auto &v) { ranks = parseInt(flag, v, 1); })
        .option("--device", [&](const auto &flag, const auto &v) { device = parseDevice(flag, v); })
        .option("--backend", [&](const auto &flag, const auto &v) { config.parallel.backend = parseBackend(flag, v); })
        .option("--rounds", [&](const auto &flag, const auto &v) { rounds = parseInt(flag, v, 1); })
        .option("--steps", [&](const auto &flag, const auto &v) { steps = parseInt(flag, v, 1); })
        .option("--only",
                [&](const auto &flag, const auto &v) {
                    const auto &names = benchModelNames();
                    if (std::find(names.begin(), names.end(), v) == names.end())
                        throw std::invalid_argument(flag + " is mlp, cnn or deep, got '" + v + "'");
                    model = v;
                })
        .flag("--json", json);
    arguments.parse(args);
    if (ranks > 0)
        return launchRanks(ranks, json, "", args, out, err);
    rankFromEnvironment(config);
    const RanksBenchResult r = benchRanks(config.parallel, model, rounds, steps, device);
    if (config.parallel.rank == 0)
        out << jsonLine({{"type", "bench-ranks"},
                         {"model", r.model},
                         {"world", r.world},
                         {"device", device},
                         {"collectives", r.collectives},
                         {"rounds", r.rounds},
                         {"steps_per_round", steps},
                         {"plain_ms", jsonNumber(r.plainMs)},
                         {"checked_ms", jsonNumber(r.checkedMs)},
                         {"ratio", jsonNumber(r.ratio())},
                         {"round_ratio_quartiles",
                          {jsonNumber(r.roundRatios.lowQuartile), jsonNumber(r.roundRatios.highQuartile)}},
                         {"round_ratio_median", jsonNumber(r.roundRatios.median)},
                         {"round_ratio_median_95ci",
                          {jsonNumber(r.roundRatios.medianLow), jsonNumber(r.roundRatios.medianHigh)}},
                         {"arbitration_bytes", r.arbitrationBytes}})
            << '\n';
    return 0;
}

}  // namespace

// `bench --record-file FILE`: what a keep policy makes of a long, wide run (docs/benchmarks.md).
int benchRecordFileCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    std::string path;
    int layers = 600, steps = 100000, nanEvery = 50000;
    KeepPolicy keep;
    bool json = false;
    Arguments arguments("bench");
    arguments.option("--record-file", [&path](const auto &, const auto &v) { path = v; })
        .option("--layers", [&layers](const auto &flag, const auto &v) { layers = parseInt(flag, v, 1); })
        .option("--steps", [&steps](const auto &flag, const auto &v) { steps = parseInt(flag, v, 1); })
        .option("--nan-every", [&nanEvery](const auto &flag, const auto &v) { nanEvery = parseInt(flag, v, 0); })
        .option("--keep", [&keep](const auto &flag, const auto &v) {
            const auto parsed = parseKeepPolicy(v);
            if (!parsed)
                throw std::invalid_argument(flag + " is all, auto or a size of at least 1MiB, got '" + v + "'");
            keep = *parsed;
        })
        .flag("--json", json);
    arguments.parse(args);
    const RecordBenchResult r = benchRecordFile(path, steps, layers, keep, nanEvery, [&](std::int64_t step) {
        if (!json && step % 65536 == 0)
            err << "step " << step << '/' << steps << "...\n";
    });
    if (json) {
        out << jsonLine({{"type", "bench-record-file"},
                         {"steps", r.steps},
                         {"layers", r.layers},
                         {"keep", r.keep},
                         {"seconds", jsonNumber(r.seconds)},
                         {"file_bytes", r.fileBytes},
                         {"bytes_per_step", jsonNumber(r.bytesPerStep())},
                         {"steps_with_layers", r.stepsWithLayers},
                         {"nonfinite_steps", r.nonFiniteSteps},
                         {"sample_every", r.sampleEvery},
                         {"open_ms", jsonNumber(r.openMs)}})
            << '\n';
        return 0;
    }
    out << std::fixed << std::setprecision(1) << r.steps << " steps of " << r.layers << " layers, keep " << r.keep
        << ": " << double(r.fileBytes) / (1024.0 * 1024.0) << " MiB (" << std::setprecision(0) << r.bytesPerStep()
        << " bytes a step), written in " << std::setprecision(1) << r.seconds << " s (" << std::setprecision(0)
        << double(r.steps) / r.seconds << " steps/s); " << r.stepsWithLayers << " steps with layer rows, "
        << r.nonFiniteSteps << " non-finite, sampled every " << r.sampleEvery << "; chunks read in "
        << std::setprecision(0) << r.openMs << " ms\n";
    return 0;
}

int benchCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    // The two forms take different options (--only names a built-in model, a file needs its
    // inputs), so --model anywhere on the line picks the form, as the two synopses read.
    const bool modelFile = std::any_of(
        args.begin(), args.end(), [](const std::string &a) { return a == "--model" || a.rfind("--model=", 0) == 0; });
    const bool replay = std::find(args.begin(), args.end(), "--replay") != args.end();
    const bool ranks = std::getenv("WORLD_SIZE") || std::any_of(args.begin(), args.end(), [](const std::string &a) {
                           return a == "--ranks" || a.rfind("--ranks=", 0) == 0;
                       });
    if (ranks)
        return benchRanksCommand(args, out, err);
    if (std::any_of(args.begin(), args.end(), [](const std::string &a) { return a.rfind("--record-file", 0) == 0; }))
        return benchRecordFileCommand(args, out, err);
    if (replay)
        return benchReplayCommand(args, out, err);
    return modelFile ? benchModelFile(args, out, err) : benchBuiltInModels(args, out, err);
}

}  // namespace nanscope::cli
