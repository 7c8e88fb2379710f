// replayCapsule(): the verdict, the op-level origin, the samples and the what-ifs of one capsule.
#include "nanscope/replay.h"

#include "nanscope/capsule_file.h"
#include "nanscope/precision.h"
#include "nanscope/run_file.h"
#include "model/torchscript_loader.h"
#include "replay/replayer.h"
#include "replay/sample_bisect.h"
#include "replay/step_compare.h"

#include <torch/torch.h>

#include <chrono>
#include <functional>
#include <sstream>

namespace nanscope {

namespace {

using Clock = std::chrono::steady_clock;

double millisSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Relative difference that still counts as the same value across thread counts and devices.
constexpr double kTolerance = 1e-3;

void checkCancel(const ReplayOptions &o)
{
    if (o.cancel && o.cancel->load())
        throw ReplayCancelled();
}

void say(const ReplayOptions &o, const std::string &what)
{
    checkCancel(o);
    if (o.progress)
        o.progress(what);
}

int chooseStep(const std::string &path, int asked)
{
    const std::vector<CapsuleEntry> entries = runFileCapsules(path);
    if (asked >= 0)
        return asked;
    if (entries.empty())
        throw RunFileError(path + ": holds no capsule (a run keeps one of its first non-finite step, and of the "
                                  "steps asked for with --capsule-at)");
    return defaultCapsuleStep(entries);
}

StepRecordPtr recordedStep(const RunFile &file, int step)
{
    for (const StepRecordPtr &r : file.readSteps(step - 1, 1))
        if (r->step == step)
            return r;
    throw RunFileError(file.path() + ": holds a capsule of step " + std::to_string(step) +
                       " but no record of it to compare with (the run ended before the step was written)");
}

std::string number(double v)
{
    std::ostringstream o;
    o << v;
    return o.str();
}

std::string samplesText(const std::vector<std::int64_t> &samples)
{
    std::string s;
    for (std::int64_t i : samples)
        s += " " + std::to_string(i);
    return s;
}

void bisectSamples(Replayer &r, const StepRecord &replayed, ReplayReport &report, const ReplayOptions &options)
{
    const Phase p = replayed.origin.phase;
    if (!replayed.failed() || p == Phase::Parameter || p == Phase::Update)
        return;  // weights already non-finite: no sample is to blame
    const TrainingBatch &batch = r.capsule().state.batch;
    say(options, "measuring the batch statistics of the BatchNorm layers");
    std::string held, unheld;
    for (const BatchStatistic &s : r.holdBatchStatistics(replayed)) {
        report.coupledBy.push_back(s.path);
        std::string &list = s.finite ? held : unheld;
        list += (list.empty() ? "" : ", ") + s.path;
    }
    if (!held.empty())
        report.noteMessages.push_back({"replay-held", {held}});
    if (!unheld.empty())
        report.noteMessages.push_back({"replay-unheld", {unheld}});
    say(options, "bisecting the batch of " + std::to_string(batch.indices.size()) + " samples");
    BisectResult b;
    try {
        b = bisectRows(batch.indices.size(), [&](const std::vector<std::size_t> &rows) {
            checkCancel(options);
            try {
                return r.computeStep(r.stateWithRows(rows), false)->failed();
            } catch (const std::exception &) {
                return false;  // a batch the model cannot take (BatchNorm on one sample): not a failure of the data
            }
        });
    } catch (...) {
        r.releaseBatchStatistics();
        throw;
    }
    r.releaseBatchStatistics();
    report.bisectReplays = b.replays;
    for (std::size_t row : b.rows)
        report.samples.push_back(batch.indices[row]);
    if (b.anySample)
        report.noteMessages.push_back({"replay-any-sample", {std::to_string(b.replays)}});
    if (b.together)
        report.noteMessages.push_back({"replay-together", {samplesText(report.samples).substr(1)}});
}

void tryWhatIfs(Replayer &r, ReplayReport &report, const ReplayOptions &options)
{
    const Capsule &c = r.capsule();
    const Controls base = c.state.controls;
    // One change tried: `finite` computes it; an error is its note.
    auto tryChange = [&](const std::string &change, const char *from,
                         const std::function<bool(EventMessage &)> &finite) {
        checkCancel(options);
        WhatIf w{change, from, false, {}, {}};
        try {
            w.finite = finite(w.noteMessage);
            w.note = composeEventText(w.noteMessage);
        } catch (const std::exception &e) {
            w.note = e.what();
            w.noteMessage = {};
        }
        report.whatIf.push_back(w);
    };
    auto atStep = [&](const std::string &change, const StepState &state) {
        tryChange(change, "step", [&](EventMessage &note) { return r.finiteThroughStep(state, note); });
    };
    auto fromSnapshot = [&](const std::string &change, const Controls &controls) {
        tryChange(change, "snapshot", [&](EventMessage &note) { return r.finiteFromSnapshot(controls, note); });
    };
    say(options, "trying changes at the step");
    std::vector<Precision> others;
    for (Precision p : {Precision::FP32, Precision::BF16, Precision::FP16})
        if (p != base.precision)
            others.push_back(p);
    for (Precision p : others) {
        Controls c2 = base;
        c2.precision = p;
        atStep(std::string("precision=") + precisionName(p), r.stateWith(c2));
    }
    for (double divisor : {2.0, 10.0}) {
        Controls c2 = base;
        c2.learningRate = c.state.learningRate / divisor;
        atStep("lr=" + number(c2.learningRate), r.stateWith(c2));
    }
    if (!report.samples.empty() && report.samples.size() < c.state.batch.indices.size()) {
        std::vector<std::size_t> rows;
        for (std::size_t i = 0; i < c.state.batch.indices.size(); ++i)
            if (std::find(report.samples.begin(), report.samples.end(), c.state.batch.indices[i]) ==
                report.samples.end())
                rows.push_back(i);
        atStep("without samples" + samplesText(report.samples), r.stateWithRows(rows));
    }
    if (!c.snapshot) {
        report.noteMessages.push_back({"replay-no-snapshot", {}});
        return;
    }
    say(options, "trying changes from the snapshot of step " + std::to_string(c.snapshot->step));
    const double lr = c.state.learningRate;  // the failing step's (a rollback may have halved it since)
    Controls asRecorded = base;
    asRecorded.learningRate = lr;
    fromSnapshot("none", asRecorded);
    for (double divisor : {2.0, 10.0}) {
        Controls c2 = asRecorded;
        c2.learningRate = lr / divisor;
        fromSnapshot("lr=" + number(c2.learningRate), c2);
    }
    Controls clipped = asRecorded;
    clipped.clipNorm = base.clipNorm ? *base.clipNorm / 10.0 : 1.0;
    fromSnapshot("clip=" + number(*clipped.clipNorm), clipped);
    for (Precision p : others) {
        Controls c2 = asRecorded;
        c2.precision = p;
        fromSnapshot(std::string("precision=") + precisionName(p), c2);
    }
}

}  // namespace

const char *replayVerdictId(ReplayVerdict v)
{
    switch (v) {
    case ReplayVerdict::Reproduced: return "reproduced";
    case ReplayVerdict::ReproducedNumerically: return "reproduced-numerically";
    case ReplayVerdict::NotReproduced: return "not-reproduced";
    }
    return "not-reproduced";
}

ReplayReport replayCapsule(const std::string &path, const ReplayOptions &options)
{
    if (std::optional<ReplayReport> stored = storedReplay(path, options.step))
        return *stored;
    const auto started = Clock::now();
    ReplayReport report;
    report.runFile = path;
    RunFile file(path);
    report.step = chooseStep(path, options.step);
    const CapsuleBlob blob = readCapsule(path, report.step);
    report.reason = blob.reason;
    const StepRecordPtr recorded = recordedStep(file, report.step);

    report.device = options.device.empty() ? "cpu" : options.device;
    if (report.device == "cuda" && !torch::cuda::is_available()) {
        report.noteMessages.push_back({"replay-no-cuda", {}});
        report.device = "cpu";
    }
    say(options, "loading the capsule of step " + std::to_string(report.step));
    Replayer r(file, blob, report.device, report.noteMessages);
    report.threads = options.threads > 0 ? options.threads : r.capsule().threads;
    torch::set_num_threads(report.threads);
    if (report.threads != r.capsule().threads)
        report.noteMessages.push_back(
            {"replay-threads", {std::to_string(report.threads), std::to_string(r.capsule().threads)}});
    report.loadMillis = millisSince(started);

    const auto t = Clock::now();
    std::shared_ptr<StepRecord> replayed;
    try {
        replayed = r.computeStep(r.capsule().state, true);
    } catch (const std::exception &e) {
        throw std::runtime_error("step " + std::to_string(report.step) +
                                 " cannot be computed again: " + firstLine(e.what()));
    }
    report.replayMillis = millisSince(t);
    const StepComparison cmp = compareSteps(*recorded, *replayed, r.layers(), kTolerance);
    report.verdict = cmp.verdict;
    report.tolerance = kTolerance;
    report.differsAt = cmp.differsAt;
    if (cmp.differsAt >= 0)
        report.differsAtPath = r.layers()[std::size_t(cmp.differsAt)].path;
    report.differsWhat = cmp.differsWhat;
    report.recordedFailed = recorded->failed();
    report.replayedFailed = replayed->failed();
    report.recordedLoss = recorded->loss;
    report.replayedLoss = replayed->loss;
    report.recordedGradNorm = recorded->gradNorm;
    report.replayedGradNorm = replayed->gradNorm;
    report.origin = replayed->origin;

    if (options.samples)
        bisectSamples(r, *replayed, report, options);
    if (options.whatIf)
        tryWhatIfs(r, report, options);
    for (const EventMessage &m : report.noteMessages)
        report.notes.push_back(composeEventText(m));
    report.totalMillis = millisSince(started);
    return report;
}

}  // namespace nanscope
