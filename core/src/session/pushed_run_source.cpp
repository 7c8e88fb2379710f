// PushedRunSource: observers are called on the pushing thread, under the source's mutex, so a
// push and an observer's removal never cross.
#include "nanscope/pushed_run_source.h"

#include <algorithm>

namespace nanscope {

template <typename F> void PushedRunSource::notify(F &&f)
{
    std::lock_guard<std::mutex> lock(mutex_);
    for (RunObserver *o : observers_)
        f(*o);
}

void PushedRunSource::addObserver(RunObserver *observer)
{
    std::lock_guard<std::mutex> lock(mutex_);
    observers_.push_back(observer);
}

void PushedRunSource::removeObserver(RunObserver *observer)
{
    std::lock_guard<std::mutex> lock(mutex_);
    observers_.erase(std::remove(observers_.begin(), observers_.end(), observer), observers_.end());
}

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
    notify([&](RunObserver &o) { o.runStarted(run, layers, config); });
}

void PushedRunSource::pushStep(const StepRecordPtr &record)
{
    notify([&](RunObserver &o) { o.stepRecorded(record); });
}

void PushedRunSource::pushEvent(const Event &event)
{
    notify([&](RunObserver &o) { o.eventRaised(event); });
}

void PushedRunSource::pushState(SessionState state)
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        state_ = state;
    }
    notify([&](RunObserver &o) { o.stateChanged(state); });
}

void PushedRunSource::finishRun(const RunSummary &summary)
{
    notify([&](RunObserver &o) { o.runFinished(summary); });
}

}  // namespace nanscope
