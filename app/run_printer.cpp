#include "run_printer.h"

#include "cli_json.h"
#include "nanscope/precision.h"
#include "nanscope/scenario.h"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace nanscope::cli {

namespace {

// A recorded loop whose length nobody knew: a line every this many steps (and every bad one).
constexpr int kUnknownLengthEvery = 100;

std::vector<std::string> nonFiniteLayers(const StepRecord &r, const std::vector<Layer> &layers)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < r.layers.size() && i < layers.size(); ++i) {
        const LayerHealth &l = r.layers[i];
        if (layers[i].parent < 0)
            continue;  // the root's output is its last layer's
        if (l.nonFinite())
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
    const Controls controls = initialControls(config);
    scaling_ = usesLossScaling(controls);
    const int steps = stepsToRun(config);
    every_ = steps > 0 ? std::max(1, steps / 20) : kUnknownLengthEvery;
    if (json_)
        return;
    if (config.isRecordedLoop())
        out_ << "recorded loop " << config.recordedLoop << " (nanscope.record), " << layers.size() << " layers, "
             << (steps > 0 ? std::to_string(steps) + " steps" : std::string("unfinished")) << ", device "
             << config.device << '\n';
    else
        out_ << (config.usesModelFile() ? "model " + config.modelPath : "scenario " + config.scenario) << ", "
             << layers.size() << " layers, " << steps << " steps, seed " << config.seed << ", device " << config.device
             << ", " << precisionLabel(controls.precision, config.device) << '\n';
}

void RunPrinter::stepRecorded(const StepRecordPtr &r)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (summaryOnly_)
        return;
    if (json_)
        printStepJson(*r);
    else
        printStepText(*r);
}

void RunPrinter::printStepJson(const StepRecord &r)
{
    Json j{{"type", "step"},
           {"step", r.step},
           {"loss", jsonNumber(r.loss)},
           {"grad_norm", jsonNumber(r.gradNorm)},
           {"grad_norm_clipped", jsonNumber(r.gradNormClipped)},
           {"lr", jsonNumber(r.learningRate)},
           {"nonfinite_layers", nonFiniteLayers(r, layers_)},
           {"skipped", r.skipped},
           {"rolled_back", r.rolledBack},
           {"loss_scale", jsonNumber(r.lossScale)},
           {"overflow_layers", paths(r.overflowLayers, layers_)}};
    const int peak = peakHeadroomLayer(r, layers_);
    if (peak >= 0)
        j["fp16_headroom"] = Json{{"layer", layers_[std::size_t(peak)].path},
                                  {"value", jsonNumber(fp16Headroom(r.layers[std::size_t(peak)].forward))}};
    if (!r.quarantined.empty())
        j["quarantined"] = r.quarantined;
    out_ << jsonLine(j) << '\n' << std::flush;  // a reader (a job's launcher, jq) sees each step as it ends
}

void RunPrinter::printStepText(const StepRecord &r)
{
    const bool firstBad = r.failed() && !sawNonFinite_;
    sawNonFinite_ = sawNonFinite_ || r.failed();
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
        source_.stop();  // headless: nobody to decide, so stop here with clean weights
    if (summaryOnly_)
        return;
    if (json_) {
        const bool layer = e.layer >= 0 && std::size_t(e.layer) < layers_.size();
        out_ << jsonLine(Json{{"type", "event"},
                              {"kind", eventKindId(e.kind)},
                              {"step", e.step},
                              {"layer", layer ? Json(layers_[std::size_t(e.layer)].path) : Json()},
                              {"text", e.text}})
             << '\n'
             << std::flush;
    } else if (e.kind != EventKind::Info) {
        out_ << "  * " << (e.step >= 0 ? "step " + std::to_string(e.step) + ": " : std::string()) << e.text << '\n';
    }
}

void RunPrinter::runFinished(const RunSummary &s)
{
    std::lock_guard<std::mutex> lock(mutex_);
    summary_ = s;
    if (json_)
        out_ << jsonLine(summaryLine(s)) << '\n';
    else if (s.error.empty() || summaryOnly_)  // main() prints the one-line error; `report` the steps before it too
        printSummaryText(s);
}

// The run file's summary schema (nanscope/run_json.h), with the line's type first.
Json RunPrinter::summaryLine(const RunSummary &s) const
{
    Json j{{"type", "summary"}};
    const Json summary = summaryJson(s, layers_);
    for (auto it = summary.begin(); it != summary.end(); ++it)
        j[it.key()] = it.value();
    return j;
}

Json RunPrinter::summaryLine() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return summaryLine(summary_);
}

void RunPrinter::printSummaryText(const RunSummary &s)
{
    out_ << "\n== report ==\n";
    if (!s.error.empty())
        out_ << "error: " << s.error << "\n";
    else if (!s.finished)
        out_ << "the run did not finish (its writer stopped before the end): the report covers the " << s.stepsRun
             << " steps recorded\n";
    out_ << "steps run: " << s.stepsRun << ", precision " << s.precision
         << (s.optimizer.empty() ? std::string() : ", optimizer " + s.optimizer) << '\n';
    if (s.firstNonFiniteStep < 0) {
        out_ << "no non-finite value in any step\n";
    } else {
        out_ << "first non-finite step: " << s.firstNonFiniteStep << '\n'
             << "origin: phase " << phaseName(s.origin.phase) << ", layer '" << s.origin.layerPath << "', op "
             << (s.origin.op.empty() ? "(not named)" : s.origin.op) << ", "
             << (s.origin.phase == Phase::Input ? "in the data"
                 : s.origin.produced            ? "produced there"
                                                : "passed on")
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
    if (s.challenge)
        out_ << "challenge: " << s.challenge->goal << (s.challenge->met ? " MET" : " not met") << '\n';
}

RunSummary RunPrinter::summary() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return summary_;
}

}  // namespace nanscope::cli
