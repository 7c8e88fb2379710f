// The Session's commands and its worker thread. Commands only set flags under the mutex; the
// worker reads them at step boundaries (run_loop.cpp), so nothing waits on a step.
#include "nanscope/session.h"

#include "nanscope/observer_list.h"

#include "session/run_loop.h"

#include <algorithm>
#include <chrono>

namespace nanscope {

struct Session::Impl final : RunLoopLink {
    std::condition_variable finished;  // the worker's run ended
    ObserverList observers;
    std::thread worker;
    bool running = false;
    int runId = 0;

    void notify(const std::function<void(RunObserver &)> &f) override { observers.forEach(f); }

    void stopWorker()
    {
        {
            std::lock_guard<std::mutex> lock(mutex);
            stopRequested = true;
        }
        wake.notify_all();
        if (worker.joinable())
            worker.join();
    }

    void work(const RunConfig &config, int id)
    {
        RunLoop(*this, config, id).run();
        {
            std::lock_guard<std::mutex> lock(mutex);
            running = false;
        }
        finished.notify_all();
    }
};

Session::Session() : d(std::make_unique<Impl>()) {}

Session::~Session() { d->stopWorker(); }

void Session::addObserver(RunObserver *observer) { d->observers.add(observer); }

void Session::removeObserver(RunObserver *observer) { d->observers.remove(observer); }

bool Session::start(const RunConfig &config, std::string *error)
{
    const std::string invalid = invalidRunConfigReason(config);
    if (!invalid.empty()) {
        if (error)
            *error = invalid;
        return false;
    }
    d->stopWorker();
    std::lock_guard<std::mutex> lock(d->mutex);
    d->stopRequested = false;
    d->paused = false;
    d->stepBudget = 0;
    d->rollbackRequested = false;
    d->capsuleRequested = false;
    d->decision.reset();
    d->controls = initialControls(config);
    d->running = true;
    const int id = ++d->runId;
    d->worker = std::thread([this, config, id] { d->work(config, id); });
    return true;
}

void Session::pause()
{
    std::lock_guard<std::mutex> lock(d->mutex);
    d->paused = true;
    if (d->state == SessionState::Running)
        d->state = SessionState::Paused;
}

void Session::resume()
{
    {
        std::lock_guard<std::mutex> lock(d->mutex);
        d->paused = false;
        if (d->decisionWanted)
            d->decision = PausedStepDecision::Continue;
    }
    d->wake.notify_all();
}

void Session::stepOnce(int count)
{
    {
        std::lock_guard<std::mutex> lock(d->mutex);
        d->paused = true;
        if (d->decisionWanted) {
            d->decision = PausedStepDecision::Continue;
            --count;
        }
        d->stepBudget += std::max(0, count);
    }
    d->wake.notify_all();
}

void Session::stop()
{
    {
        std::lock_guard<std::mutex> lock(d->mutex);
        d->stopRequested = true;
    }
    d->wake.notify_all();
}

void Session::requestRollback()
{
    {
        std::lock_guard<std::mutex> lock(d->mutex);
        d->rollbackRequested = true;
    }
    d->wake.notify_all();
}

bool Session::requestCapsule()
{
    {
        std::lock_guard<std::mutex> lock(d->mutex);
        d->capsuleRequested = true;
    }
    d->wake.notify_all();
    return true;
}

void Session::decidePausedStep(PausedStepDecision decision)
{
    {
        std::lock_guard<std::mutex> lock(d->mutex);
        if (d->decisionWanted)
            d->decision = decision;
    }
    d->wake.notify_all();
}

void Session::setControls(const Controls &controls)
{
    std::lock_guard<std::mutex> lock(d->mutex);
    d->controls = controls;
}

Controls Session::controls() const
{
    std::lock_guard<std::mutex> lock(d->mutex);
    return d->controls;
}

SessionState Session::state() const
{
    std::lock_guard<std::mutex> lock(d->mutex);
    return d->state;
}

int Session::runId() const
{
    std::lock_guard<std::mutex> lock(d->mutex);
    return d->runId;
}

bool Session::waitingAtStepBoundary() const
{
    std::lock_guard<std::mutex> lock(d->mutex);
    return d->atBoundary;
}

bool Session::wait(int timeoutMs)
{
    std::unique_lock<std::mutex> lock(d->mutex);
    auto done = [this] { return !d->running; };
    if (timeoutMs < 0) {
        d->finished.wait(lock, done);
        return true;
    }
    return d->finished.wait_for(lock, std::chrono::milliseconds(timeoutMs), done);
}

}  // namespace nanscope
