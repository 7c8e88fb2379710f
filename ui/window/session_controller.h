#pragma once
// The window's side of a RunSource: every command the window sends goes through here, and every
// record and event comes back through here. Data arrives on the source's thread and is queued
// under a short lock; a timer on the GUI thread hands it over in batches, so the window repaints
// at most ~30 times a second whatever the step rate; when the window falls behind, the queue's
// older records are folded into chunks instead of piling up. Records and events of a replaced run
// are dropped by run id.
#include "nanscope/run_source.h"

#include <QObject>
#include <QTimer>
#include <QVector>

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

Q_DECLARE_METATYPE(nanscope::StepRecordPtr)
Q_DECLARE_METATYPE(nanscope::StepChunkPtr)
Q_DECLARE_METATYPE(nanscope::Event)
Q_DECLARE_METATYPE(nanscope::SessionState)

namespace nanscope {

// Makes the source a window trains live (app/ hands in one that makes a Session): the ui never
// builds a training run itself, so it needs no LibTorch and a test can hand in any source.
using RunSourceFactory = std::function<std::unique_ptr<RunSource>()>;

class SessionController final : public QObject, private RunObserver {
    Q_OBJECT
public:
    // Without a source, the controller starts on a live one, made by `live`.
    explicit SessionController(RunSourceFactory live, std::unique_ptr<RunSource> source = nullptr,
                               QObject *parent = nullptr);
    ~SessionController() override;

    // The commands of RunSource, for the window. Those the source cannot act on do nothing
    // (see capabilities()).
    RunCapabilities capabilities() const { return source_->capabilities(); }
    bool start(const RunConfig &config, QString *error);
    void pause() { source_->pause(); }
    void resume() { source_->resume(); }
    void stepOnce(int count = 1) { source_->stepOnce(count); }
    void stop() { source_->stop(); }
    void requestRollback() { source_->requestRollback(); }
    bool requestCapsule() { return source_->requestCapsule(); }
    void decidePausedStep(PausedStepDecision decision) { source_->decidePausedStep(decision); }
    void setControls(const Controls &controls) { source_->setControls(controls); }
    Controls controls() const { return source_->controls(); }
    SessionState state() const { return source_->state(); }
    bool wait(int timeoutMs = -1) { return source_->wait(timeoutMs); }
    // Nothing more arrives until the next command: a running or paused live session waits at a
    // step boundary, and everything the source delivered has been handed to the window. Tests
    // wait for it instead of sleeping.
    bool settled() const;

    // Stops the current run and drops whatever it still delivers (the window was reset).
    void discardCurrentRun();
    // Replaces the source (a recorded run instead of the live session, or back): the old one is
    // stopped and nothing it still delivers arrives. Null: a new live source.
    void setSource(std::unique_ptr<RunSource> source);
    // Another observer of the source (the window's recorder): called on the source's thread.
    void addObserver(RunObserver *observer) { source_->addObserver(observer); }
    void removeObserver(RunObserver *observer) { source_->removeObserver(observer); }
    const std::vector<Layer> &layers() const { return layers_; }
    const RunConfig &runConfig() const { return config_; }
    const RunSummary &lastSummary() const { return summary_; }
    int deliveries() const { return deliveries_; }
    // Records folded into chunks because the window fell behind (see foldQueued), over all runs.
    std::size_t foldedRecords() const;

Q_SIGNALS:
    void runBegun(int run);
    // A long recorded run's earlier steps, folded (see RunObserver::stepsChunked): they come
    // before any record of a later step.
    void chunksArrived(const QVector<nanscope::StepChunkPtr> &chunks);
    void recordsArrived(const QVector<nanscope::StepRecordPtr> &records);
    void eventsArrived(const QVector<nanscope::Event> &events);
    void sessionStateChanged(nanscope::SessionState state);
    // The summary is lastSummary(); `error` is empty when the run ended normally.
    void runCompleted(const QString &error);

private:
    void runStarted(int run, const std::vector<Layer> &layers, const RunConfig &config) override;
    void stepRecorded(const StepRecordPtr &record) override;
    void stepsChunked(const StepChunkPtr &chunk) override;
    void eventRaised(const Event &event) override;
    void stateChanged(SessionState state) override;
    void runFinished(const RunSummary &summary) override;
    std::size_t backlog() const override;
    bool accept(int run);  // with mutex_ held
    void foldQueued();     // with mutex_ held
    void drain();

    RunSourceFactory live_;
    std::unique_ptr<RunSource> source_;
    QTimer flushTimer_;

    // Written by the source's thread, taken by drain() on the GUI thread.
    mutable std::mutex mutex_;
    int currentRun_ = 0;     // the run whose data is kept; anything else is dropped
    int discardedUpTo_ = 0;  // runs up to this id were discarded: their late start is ignored
    std::vector<StepChunkPtr> queuedChunks_;
    std::vector<StepRecordPtr> queued_;
    std::vector<Event> queuedEvents_;
    bool started_ = false;
    std::vector<Layer> pendingLayers_;
    RunConfig pendingConfig_;
    bool finished_ = false;
    RunSummary pendingSummary_;
    std::vector<SessionState> states_;
    std::size_t folded_ = 0;

    // GUI thread only.
    std::vector<Layer> layers_;
    RunConfig config_;
    RunSummary summary_;
    int deliveries_ = 0;
};

}  // namespace nanscope
