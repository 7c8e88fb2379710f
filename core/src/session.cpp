#include "nanscope/session.h"

#include "nanscope/scenario.h"
#include "trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace nanscope {

const char *sessionStateName(SessionState s)
{
    switch (s) {
    case SessionState::Idle: return "idle";
    case SessionState::Running: return "running";
    case SessionState::Paused: return "paused";
    case SessionState::Finished: return "finished";
    case SessionState::Failed: return "failed";
    }
    return "idle";
}

struct Session::Impl {
    mutable std::mutex mutex;
    std::condition_variable wake;      // commands for the worker
    std::condition_variable finished;  // the worker's run ended
    std::mutex observerMutex;
    std::vector<SessionObserver *> observers;

    std::thread worker;
    bool stopRequested = false;
    bool paused = false;
    int stepBudget = 0;
    bool rollbackRequested = false;
    bool decisionWanted = false;
    std::optional<PausedStepDecision> decision;
    Controls controls;
    SessionState state = SessionState::Idle;
    bool running = false;
    int runId = 0;

    template <typename F>
    void notify(F &&f)
    {
        std::lock_guard<std::mutex> lock(observerMutex);
        for (SessionObserver *o : observers)
            f(*o);
    }
    void setState(SessionState s)
    {
        {
            std::lock_guard<std::mutex> lock(mutex);
            state = s;
        }
        notify([s](SessionObserver &o) { o.stateChanged(s); });
    }
    void raise(const Event &e)
    {
        notify([&e](SessionObserver &o) { o.eventRaised(e); });
    }
    void publish(const std::shared_ptr<StepRecord> &rec)
    {
        StepRecordPtr frozen = rec;
        notify([&frozen](SessionObserver &o) { o.stepRecorded(frozen); });
    }

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

    // Blocks at a step boundary; returns false when the run must stop.
    bool waitForGo()
    {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [this] { return stopRequested || !paused || stepBudget > 0 || rollbackRequested; });
        if (stopRequested)
            return false;
        if (paused && stepBudget > 0 && !rollbackRequested)
            --stepBudget;
        return true;
    }

    std::optional<PausedStepDecision> waitForDecision()
    {
        std::unique_lock<std::mutex> lock(mutex);
        decisionWanted = true;
        decision.reset();
        wake.wait(lock, [this] { return stopRequested || decision.has_value() || rollbackRequested; });
        decisionWanted = false;
        if (stopRequested)
            return std::nullopt;
        if (rollbackRequested)
            return PausedStepDecision::SkipBatch;  // the rollback itself happens at the boundary
        return decision;
    }

    void run(RunConfig config, int id);
};

void Session::Impl::run(RunConfig config, int id)
{
    RunSummary summary;
    summary.scenario = config.modelPath.empty() ? config.scenario : config.modelPath;
    std::vector<int> perLayer;
    double activeMillis = 0;
    try {
        torch::set_num_threads(1);  // small models: threads cost more than they give, and results stay exact
        const ScenarioInfo *info = config.modelPath.empty() ? findScenario(config.scenario) : nullptr;
        ScenarioSetup setup = buildScenario(config);
        const std::vector<std::string> loadWarnings = std::move(setup.loadWarnings);
        Trainer trainer(std::move(setup), config);
        perLayer.assign(trainer.layers().size(), 0);
        notify([&](SessionObserver &o) { o.runStarted(id, trainer.layers(), config); });
        raise({EventKind::Info, 0, -1,
               "run " + std::to_string(id) + ": " + summary.scenario + " on " + config.device + ", " +
                   trainer.precisionLabel()});
        for (const std::string &w : loadWarnings)
            raise({EventKind::Error, 0, -1, w});
        const int steps = config.steps > 0 ? config.steps : (info ? info->defaultSteps : 100);
        setState(paused ? SessionState::Paused : SessionState::Running);
        const auto account = [&](const StepRecord &r) {
            ++summary.stepsRun;
            summary.nonFiniteSteps += r.origin.valid() ? 1 : 0;
            summary.rollbacks += r.rolledBack ? 1 : 0;
            summary.skippedSteps += r.skipped ? 1 : 0;
            summary.scalerSkippedSteps += r.overflowLayers.empty() ? 0 : 1;
            for (std::size_t i = 0; i < r.layers.size(); ++i)
                if (r.layers[i].forward.hasNonFinite() || r.layers[i].grad.hasNonFinite())
                    ++perLayer[i];
        };
        bool retry = false;
        while (trainer.step() < steps) {
            if (!waitForGo())
                break;
            bool doRollback = false;
            Controls controls;
            {
                std::lock_guard<std::mutex> lock(mutex);
                doRollback = std::exchange(rollbackRequested, false);
                controls = this->controls;
            }
            if (doRollback) {
                std::string what;
                raise({EventKind::Rollback, trainer.step(), -1,
                       trainer.rollback(false, &what) ? what : std::string("no checked-finite snapshot to restore")});
                ++summary.rollbacks;
                continue;
            }
            const std::string change = trainer.applyControls(controls);
            if (!change.empty())
                raise({EventKind::ControlChange, trainer.step(), -1, change});

            std::shared_ptr<StepRecord> rec = trainer.computeStep(retry);
            retry = false;
            rec->run = id;
            activeMillis += rec->stepMillis;
            if (rec->origin.valid()) {
                if (summary.firstNonFiniteStep < 0) {
                    summary.firstNonFiniteStep = rec->step;
                    summary.origin = rec->origin;
                    raise({EventKind::FirstNonFinite, rec->step, rec->origin.layer, rec->origin.explanation});
                }
            }
            if (!rec->quarantined.empty()) {
                std::string text = "quarantined samples";
                for (std::int64_t i : rec->quarantined)
                    text += " " + std::to_string(i);
                raise({EventKind::Recovery, rec->step, -1, text});
            }

            if (rec->origin.valid() && controls.pauseOnNonFinite) {
                rec->why = "paused before the update: the weights are untouched";
                publish(rec);
                raise({EventKind::Paused, rec->step, rec->origin.layer, rec->origin.explanation});
                setState(SessionState::Paused);
                const auto d = waitForDecision();
                if (!d) {  // stopped while paused: the step stays unapplied, and counts
                    trainer.discardStep(*rec, false);
                    account(*rec);
                    break;
                }
                {
                    std::lock_guard<std::mutex> lock(mutex);
                    controls = this->controls;
                }
                const std::string later = trainer.applyControls(controls);
                if (!later.empty())
                    raise({EventKind::ControlChange, rec->step, -1, later});
                if (*d == PausedStepDecision::Continue) {
                    std::vector<Event> events;
                    std::string stopReason;
                    trainer.applyStep(*rec, events, stopReason);
                    for (const Event &e : events)
                        raise(e);
                    if (!stopReason.empty()) {
                        summary.stoppedByPolicy = true;
                        raise({EventKind::Error, rec->step, -1, stopReason});
                        break;
                    }
                } else {
                    const bool again = *d == PausedStepDecision::Retry;
                    trainer.discardStep(*rec, again);
                    raise({EventKind::Recovery, rec->step, -1, again ? "retrying the step" : "batch skipped"});
                    retry = again;
                }
                if (!retry)
                    account(*rec);
                bool stillPaused;
                {
                    std::lock_guard<std::mutex> lock(mutex);
                    stillPaused = paused;
                }
                setState(stillPaused ? SessionState::Paused : SessionState::Running);
                continue;
            }

            std::vector<Event> events;
            std::string stopReason;
            trainer.applyStep(*rec, events, stopReason);
            publish(rec);
            for (const Event &e : events)
                raise(e);
            account(*rec);
            if (!stopReason.empty()) {
                summary.stoppedByPolicy = true;
                raise({EventKind::Error, rec->step, -1, stopReason});
                break;
            }
        }
        if (!config.savePath.empty()) {
            trainer.model().save(config.savePath);
            raise({EventKind::Info, trainer.step(), -1, "saved the model to " + config.savePath});
        }
        summary.quarantinedSamples.assign(trainer.quarantined().begin(), trainer.quarantined().end());
        summary.finalLearningRate = trainer.learningRate();
        summary.finalStateFinite = trainer.stateFinite();
        summary.finalLossScale = trainer.lossScale();
        summary.precision = trainer.precisionLabel();
    } catch (const std::exception &e) {
        summary.error = e.what();
        // LibTorch messages carry a C++ stack after the first line: keep the sentence only.
        const auto nl = summary.error.find('\n');
        if (nl != std::string::npos)
            summary.error.resize(nl);
        raise({EventKind::Error, -1, -1, summary.error});
    }
    summary.nonFiniteStepsPerLayer = perLayer;
    summary.stepsPerSecond = activeMillis > 0 ? summary.stepsRun / (activeMillis / 1000.0) : 0.0;
    notify([&](SessionObserver &o) { o.runFinished(summary); });
    setState(summary.error.empty() ? SessionState::Finished : SessionState::Failed);
    {
        std::lock_guard<std::mutex> lock(mutex);
        running = false;
    }
    finished.notify_all();
}

Session::Session() : d(std::make_unique<Impl>()) {}

Session::~Session() { d->stopWorker(); }

void Session::addObserver(SessionObserver *observer)
{
    std::lock_guard<std::mutex> lock(d->observerMutex);
    d->observers.push_back(observer);
}

void Session::removeObserver(SessionObserver *observer)
{
    std::lock_guard<std::mutex> lock(d->observerMutex);
    d->observers.erase(std::remove(d->observers.begin(), d->observers.end(), observer), d->observers.end());
}

bool Session::start(const RunConfig &config, std::string *error)
{
    const std::string invalid = invalidRunConfigReason(config);
    if (!invalid.empty()) {
        if (error)
            *error = invalid;
        return false;
    }
    const ScenarioInfo *info = config.modelPath.empty() ? findScenario(config.scenario) : nullptr;
    d->stopWorker();
    std::lock_guard<std::mutex> lock(d->mutex);
    d->stopRequested = false;
    d->paused = false;
    d->stepBudget = 0;
    d->rollbackRequested = false;
    d->decision.reset();
    d->controls = config.controls.value_or(info ? info->defaults : Controls{});
    d->running = true;
    const int id = ++d->runId;
    d->worker = std::thread([this, config, id] { d->run(config, id); });
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
