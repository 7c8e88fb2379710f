#include "run_printer.h"

#include "json_writer.h"
#include "nanscope/precision.h"
#include "nanscope/scenario.h"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace nanscope::cli {

namespace {

std::vector<std::string> nonFiniteLayers(const StepRecord &r, const std::vector<Layer> &layers)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < r.layers.size() && i < layers.size(); ++i) {
        const LayerHealth &l = r.layers[i];
        if (layers[i].parent < 0)
            continue;  // the root's output is its last layer's
        if (l.forward.hasNonFinite() || l.grad.hasNonFinite() || l.params.hasNonFinite() || l.paramGrads.hasNonFinite())
            out.push_back(layers[i].path);
    }
    return out;
}

std::vector<std::string> paths(const std::vector<int> &ids, const std::vector<Layer> &layers)
{
    std::vector<std::string> out;
    for (int id : ids)
        if (id >= 0 && std::size_t(id) < layers.size())
            out.push_back(layers[std::size_t(id)].path);
    return out;
}

// The layer whose forward output comes closest to (or past) fp16's 65504; -1 when none observed.
int peakHeadroomLayer(const StepRecord &r, const std::vector<Layer> &layers)
{
    int best = -1;
    double bestValue = -1;
    for (std::size_t i = 0; i < r.layers.size() && i < layers.size(); ++i) {
        const double h = fp16Headroom(r.layers[i].forward);
        if (layers[i].parent >= 0 && !std::isnan(h) && h > bestValue) {
            bestValue = h;
            best = int(i);
        }
    }
    return best;
}

JsonObject originJson(const Origin &o)
{
    JsonObject j;
    j.add("step", o.step).add("phase", phaseName(o.phase)).add("layer", o.layerPath);
    if (o.op.empty())
        j.addNull("op");
    else
        j.add("op", o.op);
    j.add("produced", o.produced).add("explanation", o.explanation);
    return j;
}

std::string fmt(double v)
{
    std::ostringstream s;
    s << std::setprecision(5) << v;
    return s.str();
}

}  // namespace

void RunPrinter::runStarted(int, const std::vector<Layer> &layers, const RunConfig &config)
{
    std::lock_guard<std::mutex> lock(mutex_);
    layers_ = layers;
    const ScenarioInfo *info = config.modelPath.empty() ? findScenario(config.scenario) : nullptr;
    const Controls controls = config.controls.value_or(info ? info->defaults : Controls{});
    scaling_ = usesLossScaling(controls);
    const int steps = config.steps > 0 ? config.steps : (info ? info->defaultSteps : 100);
    every_ = std::max(1, steps / 20);
    if (!json_)
        out_ << (info ? "scenario " + config.scenario : "model " + config.modelPath) << ", " << layers.size() << " layers, " << steps << " steps, seed "
             << config.seed << ", device " << config.device << ", "
             << precisionLabel(controls.precision, config.device) << '\n';
}

void RunPrinter::stepRecorded(const StepRecordPtr &r)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (json_)
        printStepJson(*r);
    else
        printStepText(*r);
}

void RunPrinter::printStepJson(const StepRecord &r)
{
    JsonObject j;
    j.add("type", "step").add("step", r.step).add("loss", r.loss).add("grad_norm", r.gradNorm)
        .add("grad_norm_clipped", r.gradNormClipped).add("lr", r.learningRate)
        .add("nonfinite_layers", nonFiniteLayers(r, layers_)).add("skipped", r.skipped)
        .add("rolled_back", r.rolledBack).add("loss_scale", r.lossScale)
        .add("overflow_layers", paths(r.overflowLayers, layers_));
    const int peak = peakHeadroomLayer(r, layers_);
    if (peak >= 0) {
        JsonObject h;
        h.add("layer", layers_[std::size_t(peak)].path).add("value", fp16Headroom(r.layers[std::size_t(peak)].forward));
        j.add("fp16_headroom", h);
    }
    if (!r.quarantined.empty())
        j.add("quarantined", r.quarantined);
    out_ << j.str() << '\n';
}

void RunPrinter::printStepText(const StepRecord &r)
{
    const bool firstBad = r.nonFinite() && !sawNonFinite_;
    sawNonFinite_ = sawNonFinite_ || r.nonFinite();
    if (r.step % every_ != 0 && !firstBad && !r.rolledBack && r.quarantined.empty())
        return;
    const std::vector<std::string> bad = nonFiniteLayers(r, layers_);
    out_ << "step " << std::setw(5) << r.step << "  loss " << std::setw(12) << fmt(r.loss) << "  grad " << std::setw(12)
         << fmt(r.gradNorm) << "  lr " << fmt(r.learningRate);
    if (scaling_)
        out_ << "  scale " << fmt(r.lossScale);
    if (!bad.empty())
        out_ << "  non-finite in " << bad.size() << " layers";
    if (!r.why.empty())
        out_ << "  (" << r.why << ")";
    out_ << '\n';
}

void RunPrinter::eventRaised(const Event &e)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (e.kind == EventKind::Paused && stopAtPause_)
        session_.stop();  // headless: nobody to decide, so stop here with clean weights
    if (json_) {
        JsonObject j;
        j.add("type", "event").add("step", e.step).add("text", e.text);
        out_ << j.str() << '\n';
    } else if (e.kind != EventKind::Info) {
        out_ << "  * " << (e.step >= 0 ? "step " + std::to_string(e.step) + ": " : std::string()) << e.text << '\n';
    }
}

void RunPrinter::runFinished(const RunSummary &s)
{
    std::lock_guard<std::mutex> lock(mutex_);
    summary_ = s;
    if (json_)
        printSummaryJson(s);
    else if (s.error.empty())  // main() prints the one-line error
        printSummaryText(s);
}

void RunPrinter::printSummaryJson(const RunSummary &s)
{
    JsonObject j;
    j.add("type", "summary").add("scenario", s.scenario).add("steps_run", s.stepsRun);
    if (s.firstNonFiniteStep < 0)
        j.addNull("first_nonfinite_step").addNull("origin");
    else
        j.add("first_nonfinite_step", s.firstNonFiniteStep).add("origin", originJson(s.origin));
    j.add("nonfinite_steps", s.nonFiniteSteps).add("quarantined_samples", s.quarantinedSamples)
        .add("rollbacks", s.rollbacks).add("skipped_steps", s.skippedSteps)
        .add("scaler_skipped_steps", s.scalerSkippedSteps).add("final_loss_scale", s.finalLossScale)
        .add("precision", s.precision).add("final_lr", s.finalLearningRate).add("steps_per_s", s.stepsPerSecond)
        .add("stopped_by_policy", s.stoppedByPolicy).add("final_state_finite", s.finalStateFinite);
    JsonObject perLayer;
    for (std::size_t i = 0; i < s.nonFiniteStepsPerLayer.size() && i < layers_.size(); ++i)
        if (layers_[i].parent >= 0 && s.nonFiniteStepsPerLayer[i] > 0)
            perLayer.add(layers_[i].path, s.nonFiniteStepsPerLayer[i]);
    j.add("nonfinite_steps_per_layer", perLayer);
    if (!s.error.empty())
        j.add("error", s.error);
    out_ << j.str() << '\n';
}

void RunPrinter::printSummaryText(const RunSummary &s)
{
    out_ << "\n== report ==\n" << "steps run: " << s.stepsRun << ", precision " << s.precision << '\n';
    if (s.firstNonFiniteStep < 0) {
        out_ << "no non-finite value in any step\n";
    } else {
        out_ << "first non-finite step: " << s.firstNonFiniteStep << '\n'
             << "origin: phase " << phaseName(s.origin.phase) << ", layer '" << s.origin.layerPath << "', op "
             << (s.origin.op.empty() ? "(not named)" : s.origin.op) << ", "
             << (s.origin.phase == Phase::Input ? "in the data" : s.origin.produced ? "produced there" : "passed on")
             << '\n'
             << "  " << s.origin.explanation << '\n'
             << "non-finite steps: " << s.nonFiniteSteps << '\n'
             << "per layer (steps with non-finite values):\n";
        for (std::size_t i = 0; i < s.nonFiniteStepsPerLayer.size() && i < layers_.size(); ++i)
            if (layers_[i].parent >= 0 && s.nonFiniteStepsPerLayer[i] > 0)
                out_ << "  " << std::left << std::setw(12) << layers_[i].path << std::right << ' '
                     << s.nonFiniteStepsPerLayer[i] << '\n';
    }
    if (scaling_ || s.finalLossScale != 1.0)
        out_ << "loss scaling: " << s.scalerSkippedSteps << " steps skipped for overflowing gradients, final scale "
             << fmt(s.finalLossScale) << '\n';
    out_ << "recovery: " << s.quarantinedSamples.size() << " samples quarantined";
    for (std::int64_t i : s.quarantinedSamples)
        out_ << ' ' << i;
    out_ << ", " << s.rollbacks << " rollbacks, " << s.skippedSteps << " skipped steps"
         << (s.stoppedByPolicy ? ", stopped by the policy" : "") << '\n'
         << "final lr: " << fmt(s.finalLearningRate) << ", final state "
         << (s.finalStateFinite ? "finite" : "NON-FINITE") << '\n'
         << "speed: " << fmt(s.stepsPerSecond) << " steps/s\n";
}

RunSummary RunPrinter::summary() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return summary_;
}

}  // namespace nanscope::cli
