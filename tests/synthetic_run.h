#pragma once
// Test helper: a made-up run (synthetic_records.h) with non-finite steps, warnings and control
// changes where a test wants them, played to an observer or recorded into a run file.
#include "nanscope/run_recorder.h"
#include "nanscope/synthetic_records.h"

#include <QString>

#include <set>

namespace nanscope::testing {

struct Plan {
    int steps = 0;
    std::set<int> nonFinite, warnings, controls;
};

// A run's records and events in the order a session hands them over: a control change before the
// step it applies to, a warning after the step it forecasts from.
template <typename Step, typename EventAt>
void play(const Plan &p, int layers, Step step, EventAt event)
{
    for (int s = 0; s < p.steps; ++s) {
        if (p.controls.count(s))
            event(EventKind::ControlChange, s);
        step(syntheticStepRecord(0, s, layers, p.nonFinite.count(s) > 0));
        if (p.nonFinite.count(s))
            event(EventKind::FirstNonFinite, s);
        if (p.warnings.count(s))
            event(EventKind::Warning, s);
    }
}

inline void record(const QString &path, const Plan &p, int layers, const KeepPolicy &keep)
{
    RecorderOptions options;
    options.keep = keep;
    RunRecorder recorder(path.toStdString(), options);
    RunConfig config;
    config.scenario = "synthetic";
    config.steps = p.steps;
    recorder.runStarted(0, syntheticLayers(layers), config);
    play(
        p, layers, [&](const StepRecordPtr &r) { recorder.stepRecorded(r); },
        [&](EventKind kind, int step) { recorder.eventRaised(Event(kind, step, -1, std::string("event"))); });
    RunSummary summary;
    summary.stepsRun = p.steps;
    summary.finished = true;
    recorder.runFinished(summary);
    recorder.close();
}

inline Plan plan(int steps, std::set<int> nonFinite, std::set<int> warnings = {}, std::set<int> controls = {})
{
    return {steps, std::move(nonFinite), std::move(warnings), std::move(controls)};
}

// A run long enough to be opened from its chunks (94 of them), with one non-finite step in the
// middle: NaN in the forward output of layers 3.. (synthetic_records.h), recorded under `auto`.
struct LongRun {
    static constexpr int kLayers = 6;
    static constexpr int kSteps = 6000;
    static constexpr int kNanStep = 3000;
    static void record(const QString &path) { testing::record(path, plan(kSteps, {kNanStep}), kLayers, KeepPolicy{}); }
};

}  // namespace nanscope::testing
