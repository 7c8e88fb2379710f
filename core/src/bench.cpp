#include "nanscope/bench.h"

#include "trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>

namespace nanscope {

namespace {

ScenarioSetup benchSetup(const std::string &model)
{
    namespace nn = torch::nn;
    torch::manual_seed(7);
    ScenarioSetup s;
    if (model == "mlp") {
        s.model = stableModel();
        s.data = randomClassification(512, 100, 10);
        s.optimizer = OptimizerKind::AdamW;
    } else if (model == "cnn") {
        s.model = std::make_unique<ObservedSequential>("SmallCNN");
        s.model->add("conv1", nn::AnyModule(nn::Conv2d(nn::Conv2dOptions(3, 16, 3).padding(1))));
        s.model->add("relu1", nn::AnyModule(nn::ReLU()));
        s.model->add("pool1", nn::AnyModule(nn::MaxPool2d(2)));
        s.model->add("conv2", nn::AnyModule(nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1))));
        s.model->add("relu2", nn::AnyModule(nn::ReLU()));
        s.model->add("pool2", nn::AnyModule(nn::MaxPool2d(2)));
        s.model->add("flatten", nn::AnyModule(nn::Flatten()));
        s.model->add("fc", nn::AnyModule(nn::Linear(32 * 8 * 8, 10)));
        s.model->finalize();
        s.data = {torch::randn({512, 3, 32, 32}), torch::randint(10, {512}, torch::kLong)};
        s.optimizer = OptimizerKind::AdamW;
    } else {
        s.model = std::make_unique<ObservedSequential>("DeepMLP");
        for (int i = 0; i < 30; ++i) {
            s.model->add("fc" + std::to_string(i + 1), nn::AnyModule(nn::Linear(i == 0 ? 100 : 64, 64)));
            s.model->add("relu" + std::to_string(i + 1), nn::AnyModule(nn::ReLU()));
        }
        s.model->add("head", nn::AnyModule(nn::Linear(64, 10)));
        s.model->finalize();
        s.data = randomClassification(512, 100, 10);
    }
    return s;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

std::vector<BenchResult> runBenchmarks(int rounds, const std::function<void(const std::string &)> &progress,
                                       const std::string &device, Precision precision)
{
    torch::set_num_threads(1);
    std::vector<BenchResult> results;
    const ProbeMode modes[3] = {ProbeMode::Off, ProbeMode::FullMap, ProbeMode::OpLevelEveryStep};
    for (const std::string model : {"mlp", "cnn", "deep"}) {
        if (progress)
            progress("benchmarking " + model);
        RunConfig config;
        config.scenario = "bench-" + model;
        config.opLevelOrigin = false;
        config.snapshotEvery = 1 << 30;
        config.device = device;
        Controls controls;
        controls.precision = precision;
        config.controls = controls;
        Trainer trainer(benchSetup(model), config);
        std::vector<double> times[3];
        const int warmup = 5;
        for (int r = 0; r < rounds + warmup; ++r) {
            for (int m = 0; m < 3; ++m) {  // interleaved: noise hits every variant alike
                trainer.setProbeMode(modes[m]);
                std::vector<Event> events;
                std::string stop;
                const auto t0 = std::chrono::steady_clock::now();
                auto rec = trainer.computeStep();
                trainer.applyStep(*rec, events, stop);
                if (device == "cuda")
                    torch::cuda::synchronize();  // the probe-off step has no host read of its own
                const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
                if (r >= warmup)
                    times[m].push_back(ms);
            }
        }
        BenchResult b;
        b.model = model;
        b.batch = 32;
        b.rounds = rounds;
        b.probeOffMs = median(times[0]);
        b.fullMapMs = median(times[1]);
        b.opLevelMs = median(times[2]);
        results.push_back(b);
    }
    return results;
}

}  // namespace nanscope
