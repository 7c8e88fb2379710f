// A followed Python loop steered from a window: controls and decisions become requests to the
// loop (steer_request.h), which it answers in the file; the answers arrive with its other events.
#include "nanscope/recorded_run.h"

namespace nanscope {

namespace {

const char *decisionName(PausedStepDecision d)
{
    switch (d) {
    case PausedStepDecision::Continue: return "continue";
    case PausedStepDecision::SkipBatch: return "skip";
    case PausedStepDecision::Stop: return "stop";
    case PausedStepDecision::Retry: break;
    }
    return nullptr;
}

}  // namespace

bool RecordedRun::steerable() const
{
    if (steerRunId_.empty())
        return false;
    const SessionState s = state();
    return s == SessionState::Running || s == SessionState::Paused;
}

RunCapabilities RecordedRun::capabilities() const
{
    RunCapabilities can;
    can.controls = steerable();  // decisions go with them: they need a loop that reads requests
    return can;
}

Controls RecordedRun::controls() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return asked_;
}

void RecordedRun::setControls(const Controls &controls)
{
    if (!steerable())
        return;
    SteerRequest request;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (controls.learningRate != asked_.learningRate)
            request.learningRate = controls.learningRate;
        if (controls.clipNorm != asked_.clipNorm) {
            request.setClip = true;
            request.clip = controls.clipNorm;
        }
        if (nonFinitePolicyFor(controls) != nonFinitePolicyFor(asked_))
            request.policy = nonFinitePolicyFor(controls);
        asked_ = controls;
    }
    if (!request.empty())
        steer(request);
}

void RecordedRun::decidePausedStep(PausedStepDecision decision)
{
    if (!steerable())
        return;
    const char *name = decisionName(decision);
    if (!name) {
        Event e(EventKind::Warning, -1, -1,
                "a Python loop cannot compute its step again: continue, skip, roll back or stop it");
        e.run = runId();
        observers_.forEach([&](RunObserver &o) { o.eventRaised(e); });
        return;
    }
    SteerRequest request;
    request.decide = name;
    steer(request);
}

void RecordedRun::requestRollback()
{
    if (!steerable())
        return;
    SteerRequest request;
    request.decide = "rollback";
    steer(request);
}

void RecordedRun::steer(const SteerRequest &request)
{
    try {
        sendSteerRequest(path_, steerRunId_, request);
    } catch (const RunFileError &error) {
        Event e(EventKind::Warning, -1, -1, std::string("cannot steer the loop: ") + error.what());
        e.run = runId();
        observers_.forEach([&](RunObserver &o) { o.eventRaised(e); });
    }
}

}  // namespace nanscope
