// Each case is a function of the step: values on a schedule, with a fixed pseudo-random wobble so
// that fits are never exact, and non-finite values where the case needs them. The origins a case
// sets are replaced by findOrigin's (nanscope_conformance): they only say what the step is about.
#include "conformance_cases.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>

namespace nanscope::conformance {

namespace {

constexpr int kSteps = 68;  // more than a chunk (64 steps)
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// A fixed wobble in [-1, 1): the same on every machine (a 64-bit LCG, no library generator).
double wobble(std::uint64_t &state)
{
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return double(state >> 11) / double(1ULL << 53) * 2.0 - 1.0;
}

// `v` to three significant digits: short in the corpus, and read back as the same double.
double r3(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", v);
    return std::strtod(text, nullptr);
}

// A finite tensor of `numel` values whose magnitude reaches `absMax` (to three digits).
TensorHealth finite(double absMax, std::int64_t numel = 64)
{
    TensorHealth h;
    h.present = true;
    h.numel = numel;
    h.max = h.absMax = r3(absMax);
    h.min = -h.max;
    h.finiteL2 = h.max * 4.0;
    return h;
}

// `nan` NaN and `inf` +Inf among `numel` values, the rest finite up to `absMax`.
TensorHealth broken(std::int64_t nan, std::int64_t inf, double absMax = 1.0, std::int64_t numel = 64)
{
    TensorHealth h = finite(absMax, numel);
    h.nan = nan;
    h.posInf = inf;
    if (nan + inf >= numel) {
        h.min = h.max = h.absMax = kNaN;
        h.finiteL2 = 0.0;
    }
    return h;
}

std::vector<Layer> threeLayers()
{
    return {{0, "", "Sequential", -1}, {1, "fc1", "Linear", 0}, {2, "fc2", "Linear", 0}};
}

// A record with every layer finite and quiet; `shape` then changes what the case is about.
StepRecord quiet(int step, std::uint64_t &state, std::size_t layers)
{
    StepRecord r;
    r.step = step;
    r.loss = r3(1.0 + 0.1 * wobble(state));
    r.lossHealth = finite(std::abs(r.loss), 1);
    r.gradNorm = r3(0.5 + 0.05 * wobble(state));
    r.gradNormClipped = r.gradNorm;
    r.learningRate = 0.01;
    r.stepMillis = r3(2.0 + 0.5 * wobble(state));
    r.inputHealth = finite(3.0);
    r.layers.resize(layers);
    for (std::size_t i = 0; i < layers; ++i) {
        LayerHealth &h = r.layers[i];
        h.forward = finite(2.0 + wobble(state));
        h.grad = finite(0.1 + 0.05 * wobble(state));
        if (i > 0) {
            h.params = finite(0.5 + 0.1 * wobble(state));
            h.paramGrads = finite(0.01 + 0.005 * wobble(state));
            h.updateRatio = r3(1e-3 * (1.0 + 0.5 * wobble(state)));
        }
    }
    return r;
}

Case make(const std::string &name, const std::string &precision, std::uint64_t seed,
          const std::function<void(StepRecord &, std::uint64_t &)> &shape)
{
    Case c{name, precision, threeLayers(), {}};
    std::uint64_t state = seed;
    for (int step = 0; step < kSteps; ++step) {
        StepRecord r = quiet(step, state, c.layers.size());
        shape(r, state);
        c.records.push_back(std::move(r));
    }
    return c;
}

void failForward(StepRecord &r, int layer)
{
    r.layers[std::size_t(layer)].forward = broken(3, 1);
    r.origin.phase = Phase::Forward;
    r.origin.layer = layer;
    r.origin.produced = true;
    r.loss = kNaN;
    r.lossHealth = broken(1, 0, 1.0, 1);
}

}  // namespace

std::vector<Case> cases()
{
    std::vector<Case> out;
    // fc2's output grows about 1.5 decades a step until it overflows fp32 at step 25; then NaN.
    out.push_back(make("overflow-fp32", "fp32", 1, [](StepRecord &r, std::uint64_t &s) {
        if (r.step < 25) {
            const double v = std::pow(10.0, 1.5 * r.step + 0.1 * wobble(s));
            r.layers[2].forward = finite(v);
            r.loss = r3(v * 0.5);
            r.lossHealth = finite(r.loss, 1);
        } else {
            failForward(r, 2);
        }
    }));
    // fp16: fc1's output falls a decade a step and the gradient into fc2 half a decade.
    out.push_back(make("vanishing-fp16", "fp16", 2, [](StepRecord &r, std::uint64_t &s) {
        r.layers[1].forward = finite(std::pow(10.0, -0.9 * r.step + 0.05 * wobble(s)));
        r.layers[2].grad = finite(std::pow(10.0, -0.45 * r.step + 0.05 * wobble(s)));
    }));
    // bf16: the gradient into fc1 falls towards bf16's smallest value; outputs stay put.
    out.push_back(make("vanishing-bf16", "bf16", 3, [](StepRecord &r, std::uint64_t &s) {
        r.layers[1].grad = finite(std::pow(10.0, -2.0 - 2.0 * r.step + 0.1 * wobble(s)));
    }));
    // fc1's updates are as large as its weights from step 10; fc2's vanish below 1e-7 from step 5.
    out.push_back(make("updates", "fp32", 4, [](StepRecord &r, std::uint64_t &s) {
        if (r.step >= 10)
            r.layers[1].updateRatio = r3(2.0 + wobble(s));
        if (r.step >= 5)
            r.layers[2].updateRatio = r3(1e-9 * (1.0 + 0.5 * wobble(s)));
        if (r.step == 12 || r.step == 30)
            r.layers[1].updateRatio = kNaN;  // no update applied: the run of large ones starts again
    }));
    // A dynamic loss scaler backs off: gradient overflows it absorbs (backward, scale halved), the
    // scale below 1 and falling, then a forward NaN it cannot absorb at step 50.
    out.push_back(make("loss-scale", "fp16", 5, [](StepRecord &r, std::uint64_t &s) {
        r.lossScaling = true;
        const int halvings = r.step / 4;
        r.lossScale = std::ldexp(256.0, -halvings);  // below 1 from step 36
        if (r.step % 4 == 3 && r.step < 50) {
            r.skipped = true;
            r.layers[2].paramGrads = broken(0, 2, 0.5);
            r.layers[2].grad = broken(0, 1, 0.5);
            r.overflowLayers = {2};
            r.origin.phase = Phase::Backward;
            r.origin.layer = 2;
            r.origin.produced = true;
            r.gradNorm = r.gradNormClipped = std::numeric_limits<double>::infinity();
            r.layers[2].updateRatio = kNaN;
            r.layers[1].updateRatio = kNaN;
        }
        if (r.step == 50)
            failForward(r, 1);
        (void)s;
    }));
    // Growth half buried in noise: fits near the threshold of trust, window after window.
    out.push_back(make("noisy-growth", "fp32", 7, [](StepRecord &r, std::uint64_t &s) {
        r.layers[1].forward = finite(std::pow(10.0, 10.0 + 0.35 * r.step + 1.6 * wobble(s)));
        r.layers[2].forward = finite(std::pow(10.0, 12.0 + 0.3 * r.step + 1.4 * wobble(s)));
    }));
    // A different fault every step, in turn: what each phase of the origin rule answers.
    out.push_back(make("origins", "fp32", 8, [](StepRecord &r, std::uint64_t &) {
        LayerHealth &fc1 = r.layers[1], &fc2 = r.layers[2];
        switch (r.step % 10) {
        case 1: failForward(r, 1); r.layers[1].inputFinite = false; break;  // non-finite from the root's code
        case 2: r.loss = kNaN; r.lossHealth = broken(1, 0, 1.0, 1); break;  // the loss alone
        case 3: fc1.grad = broken(2, 0); break;                            // made by fc2's backward
        case 4: fc2.grad = broken(0, 3); break;                            // made by the loss's backward
        case 5: fc1.paramGrads = broken(1, 0); break;                      // only a parameter's gradient
        case 6: fc2.params = broken(0, 1); break;                          // an update made the weights bad
        case 7: fc2.params = broken(0, 1); fc1.params = broken(1, 0); break;  // and they stay bad
        case 8: failForward(r, 2); fc1.forward = broken(1, 0); break;       // two layers: the first in order
        case 9: fc1.grad = broken(1, 0); fc2.paramGrads = broken(0, 1); break;
        default: break;
        }
    }));
    // Noise only: wide but steady values that no rule may warn of, with a NaN input at step 40.
    out.push_back(make("noise", "fp32", 6, [](StepRecord &r, std::uint64_t &s) {
        r.layers[1].forward = finite(std::pow(10.0, 3.0 + 1.5 * wobble(s)));
        r.layers[2].forward = finite(std::pow(10.0, 8.0 + 2.0 * wobble(s)));
        r.loss = r3(std::pow(10.0, 2.0 + wobble(s)));
        r.lossHealth = finite(r.loss, 1);
        if (r.step == 40) {
            r.inputHealth = broken(1, 0, 3.0);
            r.origin.phase = Phase::Input;
            r.origin.layer = -1;
            r.quarantined = {7, 9};
        }
    }));
    return out;
}

std::vector<RetentionCase> retentionCases()
{
    const auto warning = [](int at, int about) { return std::make_pair(at, std::make_pair(EventKind::Warning, about)); };
    const auto first = [](int at) { return std::make_pair(at, std::make_pair(EventKind::FirstNonFinite, at)); };
    const auto info = [](int at) { return std::make_pair(at, std::make_pair(EventKind::Info, at)); };
    return {
        // Past the first 1,024 steps: samples, a warning's lead-up, non-finite steps (the first
        // with its event), lead-ups that overlap, and an event that keeps nothing.
        {"lead-up", 1400, {1100, 1101, 1250, 1290}, {warning(1180, 1180), first(1100), info(1200), warning(1300, 1302)},
         {}},
        // A budget thins the samples twice; a lead-up then relabels the samples it holds and writes
        // again one the thinning dropped while it waited.
        {"thinning", 2600, {2205, 2500}, {warning(2100, 2100)}, {1500, 2200}},
    };
}

}  // namespace nanscope::conformance
