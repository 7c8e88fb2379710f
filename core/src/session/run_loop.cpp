#include "session/run_loop.h"

#include "distributed/rank_sync.h"
#include "capsule/capsule_codec.h"
#include "scenarios/scenarios.h"
#include "training/trainer.h"
#include "nanscope/challenge.h"
#include "nanscope/run_threads.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace nanscope {

namespace {

// LibTorch messages carry a C++ stack after the first line: keep the sentence only.
std::string firstSentence(std::string message)
{
    const auto nl = message.find('\n');
    if (nl != std::string::npos)
        message.resize(nl);
    return message;
}

}  // namespace

RunLoop::RunLoop(RunLoopLink &link, RunConfig config, int run) : link_(link), config_(std::move(config)), run_(run)
{
    summary_.run = run;
    summary_.source = runSource(config_);
}

RunLoop::~RunLoop() = default;

void RunLoop::run()
{
    try {
        begin();
        trainSteps();
        finish();
    } catch (const std::exception &e) {
        summary_.error = firstSentence(e.what());
        raise({EventKind::Error, -1, -1, summary_.error});
        if (trainer_) {  // what the run got to, as a finished run's summary says it
            try {
                describeState();
            } catch (const std::exception &) {
                // a device that failed may fail again when read: the error above is what counts
            }
        }
    }
    tally_.fill(summary_);
    judgeChallenge();
    link_.notify([this](RunObserver &o) { o.runFinished(summary_); });
    setState(summary_.error.empty() ? SessionState::Finished : SessionState::Failed);
}

void RunLoop::begin()
{
    torch::set_num_threads(kRunThreads);
    if (config_.parallel.active() && config_.device == "cuda")
        useRankGpu(config_.parallel);  // before the model or the data reach a GPU
    RunSetup setup = buildRunSetup(config_);
    const std::vector<std::string> loadWarnings = std::move(setup.loadWarnings);
    trainer_ = std::make_unique<Trainer>(std::move(setup), config_);
    if (config_.parallel.active())
        joinRanks();
    tally_ = StepTally(trainer_->layers().size());
    forecast_ = TrendForecast(config_.forecastHorizon);
    forecast_.reset(trainer_->layers());
    link_.notify([this](RunObserver &o) { o.runStarted(run_, trainer_->layers(), config_); });
    raise(Event(EventKind::Info, 0, -1,
                EventMessage{"run-started",
                             {std::to_string(run_), summary_.source, config_.device, trainer_->precisionLabel(),
                              trainer_->optimizerSettings().label()}}));
    for (const std::string &w : loadWarnings)
        raise({EventKind::Error, 0, -1, w});
    bool paused;
    {
        std::lock_guard<std::mutex> lock(link_.mutex);
        paused = link_.paused;
    }
    setState(paused ? SessionState::Paused : SessionState::Running);
}

void RunLoop::trainSteps()
{
    const int steps = stepsToRun(config_);
    while (trainer_->step() < steps) {
        if (!waitForGo())
            return;
        if (takeRollbackRequest()) {
            rollBack();
            continue;
        }
        const Controls controls = liveControls();
        applyControls(controls, trainer_->step());

        std::shared_ptr<StepRecord> record = trainer_->computeStep(std::exchange(retry_, false));
        record->run = run_;
        noteNonFinite(*record);
        keepQuarantinedOfRetry(*record);
        takeCapsuleIfDue(*record);
        if (ranks_) {  // a job decides together, never pauses
            if (!applyAcrossRanks(std::move(record)))
                return;
            continue;
        }

        const int step = record->step;
        const Outcome outcome =
            record->failed() && controls.pauseOnNonFinite ? pauseForDecision(*record) : Outcome::Apply;
        switch (outcome) {
        case Outcome::Apply:
            if (!applyAndPublish(std::move(record)))
                return;
            break;
        case Outcome::Skip:
            discardAndPublish(std::move(record), "batch skipped");
            raise(Event(EventKind::Recovery, step, -1, EventMessage{"batch-skipped", {}}));
            break;
        case Outcome::Retry:  // the same batch again: this record is superseded, never published
            trainer_->discardStep(*record, true);
            retryQuarantined_ = record->quarantined;  // the batch left them out: the retry draws clean
            raise(Event(EventKind::Recovery, record->step, -1, EventMessage{"retrying", {}}));
            retry_ = true;
            break;
        case Outcome::Stopped:  // the step stays unapplied, and counts
            discardAndPublish(std::move(record), "stopped while paused: the update was not applied");
            return;
        }
    }
}

bool RunLoop::waitForGo()
{
    std::unique_lock<std::mutex> lock(link_.mutex);
    link_.atBoundary = true;
    link_.wake.wait(lock, [this] {
        return link_.stopRequested || !link_.paused || link_.stepBudget > 0 || link_.rollbackRequested;
    });
    link_.atBoundary = false;
    if (link_.stopRequested)
        return false;
    if (link_.paused && link_.stepBudget > 0 && !link_.rollbackRequested)
        --link_.stepBudget;
    return true;
}

bool RunLoop::takeRollbackRequest()
{
    std::lock_guard<std::mutex> lock(link_.mutex);
    return std::exchange(link_.rollbackRequested, false);
}

void RunLoop::rollBack()
{
    EventMessage what;
    if (!trainer_->rollback(false, &what))
        what = {"no-snapshot", {}};
    raise(Event(EventKind::Rollback, trainer_->step(), -1, what));
}

Controls RunLoop::liveControls()
{
    std::lock_guard<std::mutex> lock(link_.mutex);
    return link_.controls;
}

void RunLoop::applyControls(const Controls &controls, int step)
{
    std::string text;
    std::vector<ControlChange> changes = trainer_->applyControls(controls, &text);
    if (changes.empty())
        return;
    Event e{EventKind::ControlChange, step, -1, text};
    e.changes = std::move(changes);
    raise(e);
}

void RunLoop::noteNonFinite(const StepRecord &record)
{
    if (record.failed() && !firstNonFiniteRaised_) {
        firstNonFiniteRaised_ = true;
        Event e{EventKind::FirstNonFinite, record.step, record.origin.layer, record.origin.explanation};
        e.origin = record.origin;
        raise(e);
    }
    if (!record.quarantined.empty()) {
        std::string samples;
        for (std::int64_t i : record.quarantined)
            samples += (samples.empty() ? "" : " ") + std::to_string(i);
        raise(Event(EventKind::Recovery, record.step, -1, EventMessage{"quarantined", {samples}}));
    }
}

// The retried step's record names what its superseded attempt quarantined (their event is
// raised already), so the file's rows, the tally and the summary all keep them.
void RunLoop::keepQuarantinedOfRetry(StepRecord &record)
{
    std::vector<std::int64_t> carried = std::exchange(retryQuarantined_, {});
    for (std::int64_t i : record.quarantined)
        if (std::find(carried.begin(), carried.end(), i) == carried.end())
            carried.push_back(i);
    if (!carried.empty())
        record.quarantined = std::move(carried);
}

bool RunLoop::takeCapsuleRequest()
{
    std::lock_guard<std::mutex> lock(link_.mutex);
    return std::exchange(link_.capsuleRequested, false);
}

void RunLoop::takeCapsuleIfDue(const StepRecord &record)
{
    const std::string &fault = trainer_->faultDone();
    const bool faultNow = !fault.empty() && !faultReported_;
    const bool corrupts = config_.fault.rank >= 0;  // a job's rank: the flip stays
    if (faultNow) {
        faultReported_ = true;
        raise({EventKind::Warning, record.step, -1,
               (corrupts ? "fault injected, kept in this rank's memory from now on: "
                         : "fault injected for this step only: ") +
                   fault});
    }
    const std::vector<int> &asked = config_.capsuleSteps;
    if (record.failed() && config_.capsuleOnFailure && !failureCapsuled_) {
        failureCapsuled_ = true;
        saveCapsule(record, kCapsuleFirstNonFinite);
    } else if (faultNow) {
        saveCapsule(record, kCapsuleFault);
    } else if (std::find(asked.begin(), asked.end(), record.step) != asked.end() || takeCapsuleRequest()) {
        saveCapsule(record, kCapsuleAsked);
    }
    if (faultNow && corrupts)
        trainer_->keepFaultFlipped();
}

void RunLoop::saveCapsule(const StepRecord &record, const char *reason)
{
    std::shared_ptr<CapsuleBlob> blob;
    try {
        blob = std::make_shared<CapsuleBlob>(encodeCapsule(captureCapsule(*trainer_, record, config_, reason), run_));
    } catch (const std::exception &e) {  // the run goes on without it
        raise({EventKind::Error, record.step, -1, "no capsule of this step: " + firstSentence(e.what())});
        return;
    }
    const CapsulePtr published = blob;
    link_.notify([&published](RunObserver &o) { o.capsuleSaved(published); });
    const double kib = double(blob->state.size() + blob->meta.size()) / 1024.0;
    std::ostringstream size;
    size << std::fixed << std::setprecision(1) << kib;
    std::vector<std::string> args{std::to_string(record.step), reason, size.str()};
    if (blob->snapshotStep >= 0)
        args.push_back(std::to_string(blob->snapshotStep));
    raise(Event(EventKind::Info, record.step, -1,
                EventMessage{blob->snapshotStep >= 0 ? "capsule-with-snapshot" : "capsule", std::move(args)}));
}

RunLoop::Outcome RunLoop::pauseForDecision(const StepRecord &record)
{
    Event paused{EventKind::Paused, record.step, record.origin.layer, record.origin.explanation};
    paused.origin = record.origin;
    raise(paused);
    setState(SessionState::Paused);
    pausedRecord_ = &record;
    const std::optional<PausedStepDecision> decision = waitForDecision();
    pausedRecord_ = nullptr;
    if (!decision)
        return Outcome::Stopped;
    // The user may have changed the controls while looking at the paused step.
    applyControls(liveControls(), record.step);
    bool stillPaused;
    {
        std::lock_guard<std::mutex> lock(link_.mutex);
        stillPaused = link_.paused;
    }
    setState(stillPaused ? SessionState::Paused : SessionState::Running);
    switch (*decision) {
    case PausedStepDecision::Continue: return Outcome::Apply;
    case PausedStepDecision::SkipBatch: return Outcome::Skip;
    case PausedStepDecision::Retry: return Outcome::Retry;
    case PausedStepDecision::Stop: return Outcome::Stopped;
    }
    return Outcome::Skip;
}

std::optional<PausedStepDecision> RunLoop::waitForDecision()
{
    std::unique_lock<std::mutex> lock(link_.mutex);
    link_.decisionWanted = true;
    link_.decision.reset();
    for (;;) {
        link_.wake.wait(lock, [this] {
            return link_.stopRequested || link_.decision.has_value() || link_.rollbackRequested ||
                   link_.capsuleRequested;
        });
        if (!std::exchange(link_.capsuleRequested, false))
            break;
        // Save this step: the paused step, whose update is not applied yet.
        lock.unlock();
        saveCapsule(*pausedRecord_, kCapsuleAsked);
        lock.lock();
    }
    link_.decisionWanted = false;
    if (link_.stopRequested)
        return std::nullopt;
    if (link_.rollbackRequested)
        return PausedStepDecision::SkipBatch;  // the rollback itself happens at the boundary
    return link_.decision;
}

bool RunLoop::applyAndPublish(std::shared_ptr<StepRecord> record)
{
    std::vector<Event> events;
    std::string stopReason;
    trainer_->applyStep(*record, events, stopReason);
    const StepRecordPtr published = publish(std::move(record));
    for (const Event &e : events)
        raise(e);
    if (stopReason.empty())
        return true;
    summary_.stoppedByPolicy = true;
    raise({EventKind::Error, published->step, -1, stopReason});
    return false;
}

void RunLoop::discardAndPublish(std::shared_ptr<StepRecord> record, const std::string &why)
{
    trainer_->discardStep(*record, false);
    record->why = why;
    publish(std::move(record));
}

// The record is final from here on: observers on other threads read it while the loop goes on.
StepRecordPtr RunLoop::publish(std::shared_ptr<StepRecord> record)
{
    const StepRecordPtr published = std::move(record);
    tally_.add(*published);
    recentLosses_.push_back(published->loss);
    if (recentLosses_.size() > std::size_t(kChallengeLossWindow))
        recentLosses_.pop_front();
    link_.notify([&published](RunObserver &o) { o.stepRecorded(published); });
    // Once applied: the update ratios of this step's update are in the record.
    for (Event &warning : forecast_.add(*published, published->precision, trainer_->precisionLabel()))
        raise(std::move(warning));
    return published;
}

void RunLoop::finish()
{
    if (!config_.savePath.empty()) {
        trainer_->model().save(config_.savePath);
        raise(Event(EventKind::Info, trainer_->step(), -1, EventMessage{"model-saved", {config_.savePath}}));
    }
    if (ranks_)
        compareRankParameters(trainer_->step(), true);
    describeState();
}

void RunLoop::describeState()
{
    summary_.finalLearningRate = trainer_->learningRate();
    summary_.finalStateFinite = trainer_->stateFinite();
    summary_.finalLossScale = trainer_->lossScale();
    summary_.precision = trainer_->precisionLabel();
    summary_.optimizer = trainer_->optimizerSettings().label();
}

void RunLoop::judgeChallenge()
{
    double mean = recentLosses_.empty() ? std::nan("") : 0.0;
    for (double loss : recentLosses_)
        mean += loss / double(recentLosses_.size());  // NaN as soon as one loss is not finite
    const Controls controls = trainer_ ? trainer_->controls() : initialControls(config_);
    summary_.challenge = checkChallenge(config_, ChallengeEvidence{summary_, controls, mean});
}

void RunLoop::raise(Event event)
{
    event.run = run_;
    summary_.rollbacks += event.kind == EventKind::Rollback ? 1 : 0;
    link_.notify([&event](RunObserver &o) { o.eventRaised(event); });
}

void RunLoop::setState(SessionState state)
{
    {
        std::lock_guard<std::mutex> lock(link_.mutex);
        link_.state = state;
    }
    link_.notify([state](RunObserver &o) { o.stateChanged(state); });
}

}  // namespace nanscope
