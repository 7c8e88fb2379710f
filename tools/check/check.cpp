// nanscope_check [cpu|cuda] [steps] [fp32|fp16|bf16] [--no-bench] [--device-path]: every scenario
// through the core in one precision, one line each, then the benchmark ratios. --device-path on
// the CPU gathers the map as CUDA does (statistics as tensors, one read a step). No Qt, so it builds wherever
// LibTorch does (the device check builds it against a pip wheel's LibTorch on a GPU machine).
#include "nanscope/allocator.h"
#include "nanscope/bench.h"
#include "nanscope/precision.h"
#include "nanscope/scenario.h"
#include "nanscope/session.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

namespace {

struct Collector : nanscope::RunObserver {
    nanscope::RunSummary summary;
    int firstForwardStep = -1;
    std::string firstForwardLayer;
    std::vector<nanscope::Layer> layers;
    void runStarted(int, const std::vector<nanscope::Layer> &l, const nanscope::RunConfig &) override { layers = l; }
    void stepRecorded(const nanscope::StepRecordPtr &r) override
    {
        if (firstForwardStep >= 0)
            return;
        for (std::size_t i = 1; i < r->layers.size(); ++i)
            if (r->layers[i].forward.hasNonFinite()) {
                firstForwardStep = r->step;
                firstForwardLayer = layers[i].path;
                return;
            }
    }
    void runFinished(const nanscope::RunSummary &s) override { summary = s; }
};

}  // namespace

int main(int argc, char **argv)
{
    nanscope::keepFreedTensorMemory();
    const std::string device = argc > 1 ? argv[1] : "cpu";
    const int steps = argc > 2 ? std::atoi(argv[2]) : 0;
    const std::optional<nanscope::Precision> precision = nanscope::parsePrecision(argc > 3 ? argv[3] : "fp32");
    if (!precision) {
        std::fprintf(stderr, "nanscope_check: precision is fp32, fp16 or bf16, got '%s'\n", argv[3]);
        return 2;
    }
    bool bench = true;
    bool devicePath = false;
    for (int i = 4; i < argc; ++i) {
        if (std::strcmp(argv[i], "--no-bench") == 0) {
            bench = false;
        } else if (std::strcmp(argv[i], "--device-path") == 0) {
            devicePath = true;
        } else {
            std::fprintf(stderr, "nanscope_check: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    int failures = 0;
    std::printf("precision %s on %s%s\n", nanscope::precisionLabel(*precision, device).c_str(), device.c_str(),
                devicePath ? " (device code path)" : "");
    for (const nanscope::ScenarioInfo &info : nanscope::scenarios()) {
        nanscope::Session session;
        Collector c;
        session.addObserver(&c);
        nanscope::RunConfig config;
        config.scenario = info.id;
        config.device = device;
        config.steps = steps;
        config.devicePathOnCpu = devicePath;
        nanscope::Controls controls = info.defaults;
        controls.precision = *precision;
        config.controls = controls;
        std::string error;
        if (!session.start(config, &error) || !session.wait()) {
            std::printf("%-16s ERROR %s\n", info.id.c_str(), error.c_str());
            ++failures;
            continue;
        }
        const auto &s = c.summary;
        std::printf("%-16s steps=%d first_nonfinite=%d phase=%s layer='%s' op='%s' first_forward_inf=%d@'%s' "
                    "rollbacks=%d skipped=%d scaler_skipped=%d final_scale=%g %s\n",
                    info.id.c_str(), s.stepsRun, s.firstNonFiniteStep, nanscope::phaseName(s.origin.phase),
                    s.origin.layerPath.c_str(), s.origin.op.c_str(), c.firstForwardStep, c.firstForwardLayer.c_str(),
                    s.rollbacks, s.skippedSteps, s.scalerSkippedSteps, s.finalLossScale, s.error.c_str());
        failures += s.error.empty() ? 0 : 1;
    }
    if (bench)
        for (const auto &b : nanscope::runBenchmarks(30, nullptr, device, *precision, {}, devicePath))
            std::printf("bench %-5s off=%.3fms map=%.3fms (x%.3f) op=%.3fms (x%.3f)\n", b.model.c_str(), b.probeOffMs,
                        b.fullMapMs, b.fullMapRatio(), b.opLevelMs, b.opLevelRatio());
    return failures == 0 ? 0 : 1;
}
