// PushedRunSource: observers are called on the pushing thread, under the observer list's lock.
#include "nanscope/pushed_run_source.h"

namespace nanscope {

bool PushedRunSource::start(const RunConfig &, std::string *error)
{
    if (error)
        *error = "this run is fed by its owner: it cannot be started";
    return false;
}

SessionState PushedRunSource::state() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return state_;
}

int PushedRunSource::runId() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return run_;
}

void PushedRunSource::beginRun(int run, const std::vector<Layer> &layers, const RunConfig &config)
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        run_ = run;
    }
    observers_.forEach([&](RunObserver &o) { o.runStarted(run, layers, config); });
}

void PushedRunSource::pushStep(const StepRecordPtr &record)
{
    observers_.forEach([&](RunObserver &o) { o.stepRecorded(record); });
}

void PushedRunSource::pushEvent(const Event &event)
{
    observers_.forEach([&](RunObserver &o) { o.eventRaised(event); });
}

void PushedRunSource::pushState(SessionState state)
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        state_ = state;
    }
    observers_.forEach([&](RunObserver &o) { o.stateChanged(state); });
}

void PushedRunSource::finishRun(const RunSummary &summary)
{
    observers_.forEach([&](RunObserver &o) { o.runFinished(summary); });
}

}  // namespace nanscope
