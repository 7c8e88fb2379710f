#include "nanscope/bench.h"

#include "nanscope/run_file.h"
#include "nanscope/run_recorder.h"

#include "bench/bench_models.h"
#include "model/model_setup.h"
#include "training/trainer.h"

#include <torch/torch.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

namespace nanscope {

namespace {

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

enum class Mode { Off, FullMap, Recorded, OpLevel };

// One step in `mode`, timed. Probe off is a user's plain loop (Trainer::plainStep): everything
// the map, the recorder and the op-level tier cost is measured against no checking at all. The
// recorder's writer works on a thread of its own: its cost shows as far as it slows the step.
double timedStep(Trainer &trainer, Mode mode, const std::string &device, RunRecorder &recorder)
{
    const auto t0 = std::chrono::steady_clock::now();
    if (mode == Mode::Off) {
        trainer.plainStep();
    } else {
        trainer.setProbeMode(mode == Mode::OpLevel ? ProbeMode::OpLevelEveryStep : ProbeMode::FullMap);
        std::vector<Event> events;
        std::string stop;
        auto rec = trainer.computeStep();
        trainer.applyStep(*rec, events, stop);
        if (mode == Mode::Recorded) {
            rec->run = 1;
            recorder.stepRecorded(rec);
        }
    }
    if (device == "cuda")
        torch::cuda::synchronize();  // the plain step has no host read of its own
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Interleaved rounds of the three modes on one trainer, their order rotating from round to round
// so that none always runs first (after the others warmed the caches); medians.
BenchResult measure(Trainer &trainer, const RunConfig &config, const std::string &model, int batch, int rounds,
                    int warmup)
{
    const std::string path =
        (std::filesystem::temp_directory_path() / ("nanscope-bench-" + std::to_string(getpid()) + kRunFileExtension))
            .string();
    RunRecorder recorder(path);
    recorder.runStarted(1, trainer.layers(), config);
    const Mode modes[4] = {Mode::Off, Mode::FullMap, Mode::Recorded, Mode::OpLevel};
    std::vector<double> times[4];
    for (int r = 0; r < rounds + warmup; ++r) {
        for (int i = 0; i < 4; ++i) {
            const int m = (r + i) % 4;
            const double ms = timedStep(trainer, modes[m], config.device, recorder);
            if (r >= warmup)
                times[m].push_back(ms);
        }
    }
    recorder.close();
    BenchResult b;
    b.model = model;
    b.batch = batch;
    b.rounds = rounds;
    b.probeOffMs = median(times[0]);
    b.fullMapMs = median(times[1]);
    b.recordMs = median(times[2]);
    b.opLevelMs = median(times[3]);
    try {
        b.bytesPerLayerStep = RunFile(path).stats().bytesPerLayerStep();
    } catch (const RunFileError &) {
    }
    std::remove(path.c_str());
    return b;
}

}  // namespace

const std::vector<std::string> &benchModelNames()
{
    static const std::vector<std::string> names = {"mlp", "cnn", "deep"};
    return names;
}

std::vector<BenchResult> runBenchmarks(int rounds, const std::function<void(const std::string &)> &progress,
                                       const std::string &device, Precision precision,
                                       const std::vector<std::string> &models, bool devicePathOnCpu)
{
    const std::vector<std::string> &all = benchModelNames();
    for (const std::string &m : models)
        if (std::find(all.begin(), all.end(), m) == all.end())
            throw std::invalid_argument("unknown benchmark model '" + m + "' (mlp, cnn or deep)");
    torch::set_num_threads(1);
    std::vector<BenchResult> results;
    for (const std::string &model : models.empty() ? all : models) {
        if (progress)
            progress("benchmarking " + model);
        RunConfig config;
        config.scenario = "bench-" + model;
        config.opLevelOrigin = false;
        config.snapshotEvery = 1 << 30;
        config.device = device;
        config.devicePathOnCpu = devicePathOnCpu;
        Controls controls;
        controls.precision = precision;
        config.controls = controls;
        Trainer trainer(benchSetup(model), config);
        results.push_back(measure(trainer, config, model, 32, rounds, 5));
    }
    return results;
}

BenchResult benchModel(const RunConfig &modelConfig, int rounds)
{
    torch::set_num_threads(1);
    RunConfig config = modelConfig;
    config.opLevelOrigin = false;
    config.snapshotEvery = 1 << 30;
    RunSetup setup = buildModelSetup(config);
    const double loadMs = setup.loadMillis, instrumentMs = setup.instrumentMillis;
    const int batch = setup.batchSize;
    Trainer trainer(std::move(setup), config);
    BenchResult b = measure(trainer, config, config.modelPath, batch, rounds, 2);
    b.loadMs = loadMs;
    b.instrumentMs = instrumentMs;
    return b;
}

}  // namespace nanscope
