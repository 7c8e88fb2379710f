#pragma once
// One run on the session's worker thread, as named steps: build, then for each step wait for a
// go, apply the user's controls, compute, decide (apply, pause for the user, skip, retry) and
// publish the record once, after the step is decided; then the summary. The summary counts the
// published records: an attempt the user retried is not one, so a retry that heals leaves the
// summary without a first non-finite step, while the FirstNonFinite event of what the user saw
// stays in the events.
#include "rules/trend_forecast.h"
#include "nanscope/run_source.h"
#include "nanscope/step_tally.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace nanscope {

class Trainer;
class RankSync;

// What the loop shares with the Session's commands: flags written under `mutex` by any thread,
// read by the worker at step boundaries, and the observers it reports to.
struct RunLoopLink {
    virtual ~RunLoopLink() = default;
    virtual void notify(const std::function<void(RunObserver &)> &f) = 0;

    mutable std::mutex mutex;
    std::condition_variable wake;  // a command for the worker
    bool stopRequested = false;
    bool paused = false;
    int stepBudget = 0;
    bool rollbackRequested = false;
    bool capsuleRequested = false;
    bool decisionWanted = false;
    std::optional<PausedStepDecision> decision;
    Controls controls;
    SessionState state = SessionState::Idle;
    bool atBoundary = false;  // the worker waits in waitForGo: every step it ran is delivered
};

class RunLoop {
public:
    RunLoop(RunLoopLink &link, RunConfig config, int run);
    ~RunLoop();
    void run();  // never throws: errors end the run with summary.error set

private:
    enum class Outcome { Apply, Skip, Retry, Stopped };

    void begin();
    void trainSteps();
    // Blocks at a step boundary; false when the run must stop.
    bool waitForGo();
    bool takeRollbackRequest();
    void rollBack();
    Controls liveControls();
    void applyControls(const Controls &controls, int step);
    void noteNonFinite(const StepRecord &record);
    void keepQuarantinedOfRetry(StepRecord &record);
    // A capsule of the step just computed, when it is the first to fail, carries the injected
    // fault, is one of config.capsuleSteps or was asked for.
    void takeCapsuleIfDue(const StepRecord &record);
    void saveCapsule(const StepRecord &record, const char *reason);
    bool takeCapsuleRequest();
    Outcome pauseForDecision(const StepRecord &record);
    std::optional<PausedStepDecision> waitForDecision();
    // Recovery, clipping and the update, then the record; false when the policy stopped the run.
    // A record is published by moving the loop's last mutable reference in: from then on it is
    // const for everyone, observers on other threads included.
    bool applyAndPublish(std::shared_ptr<StepRecord> record);
    void discardAndPublish(std::shared_ptr<StepRecord> record, const std::string &why);
    StepRecordPtr publish(std::shared_ptr<StepRecord> record);
    // A data-parallel job's step (run_loop_ranks.cpp): the ranks compare their maps, then skip the
    // step everywhere or average the gradients of the finite ones, apply and publish; false when
    // the policy stopped the run.
    void joinRanks();
    bool applyAcrossRanks(std::shared_ptr<StepRecord> record);
    void compareRankParameters(int step, bool final);
    void finish();
    void describeState();  // the summary's final state: lr, precision, loss scale, optimizer
    void judgeChallenge();  // the summary's challenge, from the summary and the recent losses

    void raise(Event event);  // a Rollback event, the policy's or the user's, counts in the summary
    void setState(SessionState state);

    RunLoopLink &link_;
    const RunConfig config_;
    const int run_;
    std::unique_ptr<Trainer> trainer_;
    std::unique_ptr<RankSync> ranks_;  // in a data-parallel job
    RunSummary summary_;
    TrendForecast forecast_;
    StepTally tally_;  // of the published records: what the summary counts
    std::deque<double> recentLosses_;  // the last kChallengeLossWindow published losses
    bool firstNonFiniteRaised_ = false;
    bool retry_ = false;
    std::vector<std::int64_t> retryQuarantined_;  // by the attempt a retry superseded
    const StepRecord *pausedRecord_ = nullptr;  // while waiting for a decision on it
    bool failureCapsuled_ = false;
    bool faultReported_ = false;
};

}  // namespace nanscope
