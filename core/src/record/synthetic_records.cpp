#include "nanscope/synthetic_records.h"

#include "nanscope/run_file.h"
#include "nanscope/run_recorder.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <cmath>

namespace nanscope {

std::vector<Layer> syntheticLayers(int count)
{
    std::vector<Layer> layers{{0, "", "BenchModel", -1}};
    for (int i = 1; i < count; ++i)
        layers.push_back(
            {i, "block" + std::to_string((i - 1) / 3) + ".layer" + std::to_string((i - 1) % 3), "Linear", 0});
    return layers;
}

StepRecordPtr syntheticStepRecord(int run, int step, int layers, bool nonFinite)
{
    auto r = std::make_shared<StepRecord>();
    r->run = run;
    r->step = step;
    r->loss = nonFinite ? std::nan("") : 2.3 / (1.0 + step * 1e-4) + 0.1 * std::sin(step * 0.01);
    r->gradNorm = nonFinite ? HUGE_VAL : 1.0 + std::cos(step * 0.003);
    r->gradNormClipped = std::min(r->gradNorm, 5.0);
    r->learningRate = 1e-3;
    r->stepMillis = 0.2;
    r->lossHealth.present = true;
    r->lossHealth.numel = 1;
    if (nonFinite)
        r->lossHealth.nan = 1;
    else
        r->lossHealth.min = r->lossHealth.max = r->lossHealth.absMax = r->loss;
    r->layers.resize(std::size_t(layers));
    const double drift = 1.0 + 1e-6 * step;  // values a float holds differently each step, as real ones
    for (int l = 0; l < layers; ++l) {
        LayerHealth &h = r->layers[std::size_t(l)];
        for (TensorHealth *t : {&h.forward, &h.grad, &h.params, &h.paramGrads}) {
            t->present = true;
            t->numel = 2048;
            t->min = -drift * (1 + 0.01 * l);
            t->max = t->absMax = drift * (1 + 0.02 * l);
            t->finiteL2 = 10 * drift;
        }
        h.updateRatio = 1e-3 * drift;
        if (nonFinite && l >= 3)
            h.forward.nan = h.grad.nan = 64 * (l - 2);
    }
    if (nonFinite) {
        r->origin.step = step;
        r->origin.phase = Phase::Forward;
        r->origin.layer = std::min(3, layers - 1);
        r->origin.layerPath = "block0.layer2";
        r->origin.produced = true;
    }
    return r;
}

RecordBenchResult benchRecordFile(const std::string &path, std::int64_t steps, int layers, const KeepPolicy &keep,
                                  std::int64_t nanEvery, const std::function<void(std::int64_t step)> &progress)
{
    using Clock = std::chrono::steady_clock;
    RecordBenchResult result;
    result.steps = steps;
    result.layers = layers;
    result.keep = keepPolicyName(keep);
    const std::vector<Layer> model = syntheticLayers(layers);
    RunConfig config;
    config.scenario = "synthetic";
    config.steps = int(steps);
    const auto begun = Clock::now();
    {
        RecorderOptions options;
        options.keep = keep;
        RunRecorder recorder(path, options);
        recorder.runStarted(0, model, config);
        RunSummary summary;
        summary.source = "synthetic";
        for (std::int64_t s = 0; s < steps; ++s) {
            // Mid-period, so each has a healthy lead-up: the policy's worst case for a scattered NaN.
            const bool bad = nanEvery > 0 && s % nanEvery == nanEvery / 2;
            result.nonFiniteSteps += bad;
            recorder.stepRecorded(syntheticStepRecord(0, int(s), layers, bad));
            if (s % 256 == 255) {  // the writer keeps pace: a queue of a million wide records would not fit
                recorder.flush();
                if (progress)
                    progress(s + 1);
            }
        }
        summary.stepsRun = int(steps);
        summary.finished = true;
        recorder.runFinished(summary);
        recorder.close();
    }
    result.seconds = std::chrono::duration<double>(Clock::now() - begun).count();
    const auto opening = Clock::now();
    RunFile file(path);
    std::int64_t chunks = 0;
    for (int after = -1;;) {
        const auto read = file.readChunks(after, std::numeric_limits<int>::max(), 4096);
        if (read.empty())
            break;
        chunks += std::int64_t(read.size());
        after = read.back()->index;
    }
    result.openMs = std::chrono::duration<double, std::milli>(Clock::now() - opening).count();
    result.fileBytes = file.stats().fileBytes;
    result.sampleEvery = file.info().keepSampleEvery;
    for (int after = -1;;) {  // the steps that kept their layers, read without them
        const auto read = file.readSteps(after, 65536, false);
        if (read.empty())
            break;
        for (const StepRecordPtr &r : read)
            result.stepsWithLayers += r->layerDetail != LayerDetail::None;
        after = read.back()->step;
    }
    return result;
}

}  // namespace nanscope
