#pragma once
// A recorded run as a RunSource: start() plays the run file to the observers as a live session
// would have delivered it (layers, steps, events, then the summary), on a thread of its own. With
// `follow`, a file another process is still writing keeps being read until its writer finishes
// it or stop() is called. Watched, never steered, except a Python loop followed while it records
// (nanscope.record): its controls (learning rate, clipping, recovery policy, pause on non-finite)
// and the decisions on its paused step go to the loop as requests (steer_request.h).
#include "nanscope/observer_list.h"
#include "nanscope/run_file.h"
#include "nanscope/run_source.h"
#include "nanscope/steer_request.h"
#include "nanscope/step_tally.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace nanscope {

struct RecordedRunOptions {
    bool follow = true;
    int pollMs = 250;         // how often a followed file is read again
    int stepsPerRead = 4096;  // steps read (and delivered) per query
    // A followed file whose writer's heartbeat stood still this long is not followed any more:
    // its writer is gone, and the run ends as unfinished.
    int writerGoneMs = 10000;
    // The player waits while an observer has more than this many layer-steps (records x layers,
    // about 300 bytes each; and at least 128 records) not yet taken in: memory stays bounded
    // however long the run (see RunObserver::backlog()), and the window, which folds a queue of
    // more than 200,000 layer-steps and 256 records into chunks, gets a file's steps one by one.
    std::size_t maxBacklogLayerSteps = 150000;
    // A file holding more steps than this hands its earlier steps over in chunks (stepsChunked):
    // a long run opens in the time of its chunks, not of its steps. The steps of the last chunk,
    // and any written later, come one by one. The default is the window's map (1024 columns) of
    // full chunks; a negative value never chunks.
    int chunkedAbove = 1024 * kChunkSteps;
    // A file holding more steps than this hands over its coarse chunks first (kCoarseChunkSteps
    // each), then the chunks after the last of them: the window's map of 1,024 columns is then a
    // coarse chunk wide or wider. Negative: never.
    int coarseAbove = 512 * kCoarseChunkSteps;
};

// Accumulates a summary from steps and chunks with the StepTally a live run uses: the summary of a run file whose
// writer never finished it.
class SummaryBuilder {
public:
    explicit SummaryBuilder(const RunFileInfo &info, std::size_t layers);
    void add(const StepRecord &record);
    void add(const StepChunk &chunk);
    void add(const Event &event);  // Rollback events are what the summary's rollbacks count
    RunSummary summary() const;

private:
    RunSummary s_;
    StepTally tally_;
};

class RecordedRun final : public RunSource {
public:
    // Opens the file at once: throws RunFileError for a file that cannot be read.
    explicit RecordedRun(const std::string &path, RecordedRunOptions options = {});
    ~RecordedRun() override;

    const RunFileInfo &info() const { return info_; }
    const std::string &path() const { return path_; }

    void addObserver(RunObserver *observer) override { observers_.add(observer); }
    void removeObserver(RunObserver *observer) override { observers_.remove(observer); }
    RunCapabilities capabilities() const override;

    // Plays the file (the configuration is the file's own; `config` is ignored). Again from the
    // start when called again.
    bool start(const RunConfig &config = {}, std::string *error = nullptr) override;
    void pause() override {}
    void resume() override {}
    void stepOnce(int) override {}
    void stop() override;  // stops following; what was delivered stays
    // A steered loop: these become requests; otherwise they do nothing.
    void requestRollback() override;
    void decidePausedStep(PausedStepDecision decision) override;
    void setControls(const Controls &controls) override;

    Controls controls() const override;
    SessionState state() const override;
    int runId() const override;
    bool wait(int timeoutMs = -1) override;

private:
    void play(int run);
    int playChunks(int run, const std::function<void(int step)> &deliverEventsUpTo, SummaryBuilder &builder);
    void setState(SessionState s);
    void waitForObservers();
    bool steerable() const;
    void steer(const SteerRequest &request);  // sends it, or tells the observers why it cannot

    std::string path_;
    RecordedRunOptions options_;
    RunFileInfo info_;
    std::unique_ptr<RunFile> file_;  // used by the player thread only once it runs
    StepChunkPtr lastChunk_;         // the player's: the chunk a thinned step last took its layers from

    ObserverList observers_;
    mutable std::mutex mutex_;  // state_, run_, playing_
    std::condition_variable changed_;
    SessionState state_ = SessionState::Idle;
    int run_ = 0;
    bool playing_ = false;
    std::atomic<bool> stopRequested_{false};
    std::thread player_;
    // The id of the Python loop's run the file holds, when the loop reads requests (else empty),
    // and the controls it was last asked for (under mutex_).
    std::string steerRunId_;
    Controls asked_;
};

}  // namespace nanscope
