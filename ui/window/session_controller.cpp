#include "window/session_controller.h"

#include "nanscope/step_chunk.h"

#include <QThread>

#include <algorithm>

namespace nanscope {

SessionController::SessionController(RunSourceFactory live, std::unique_ptr<RunSource> source, QObject *parent)
    : QObject(parent), live_(std::move(live)), source_(source ? std::move(source) : live_())
{
    qRegisterMetaType<nanscope::StepRecordPtr>();
    qRegisterMetaType<nanscope::StepChunkPtr>();
    qRegisterMetaType<nanscope::Event>();
    qRegisterMetaType<nanscope::SessionState>();
    flushTimer_.setInterval(33);
    connect(&flushTimer_, &QTimer::timeout, this, &SessionController::drain);
    flushTimer_.start();
    source_->addObserver(this);
}

SessionController::~SessionController()
{
    source_->stop();
    source_->wait(10000);
    source_->removeObserver(this);
}

bool SessionController::start(const RunConfig &config, QString *error)
{
    std::string message;
    if (!source_->start(config, &message)) {
        if (error)
            *error = QString::fromStdString(message);
        return false;
    }
    return true;
}

void SessionController::discardCurrentRun()
{
    source_->stop();
    std::lock_guard<std::mutex> lock(mutex_);
    discardedUpTo_ = std::max({discardedUpTo_, currentRun_, source_->runId()});
    queued_.clear();
    queuedChunks_.clear();
    queuedEvents_.clear();
    started_ = false;
    finished_ = false;
}

void SessionController::setSource(std::unique_ptr<RunSource> source)
{
    source_->stop();
    source_->wait(10000);
    source_->removeObserver(this);
    {
        // Run ids count per source: the new one's first run must not look stale.
        std::lock_guard<std::mutex> lock(mutex_);
        currentRun_ = 0;
        discardedUpTo_ = 0;
        queued_.clear();
        queuedChunks_.clear();
        queuedEvents_.clear();
        states_.clear();
        started_ = false;
        finished_ = false;
    }
    source_ = source ? std::move(source) : live_();
    source_->addObserver(this);
}

// Source thread: only queue, and only what belongs to the newest run not discarded. A newer run
// replaces whatever an older one still had queued.
bool SessionController::accept(int run)
{
    if (run <= discardedUpTo_ || run < currentRun_)
        return false;
    if (run > currentRun_) {
        currentRun_ = run;
        queued_.clear();
        queuedChunks_.clear();
        queuedEvents_.clear();
        started_ = false;
        finished_ = false;
    }
    return true;
}

void SessionController::runStarted(int run, const std::vector<Layer> &layers, const RunConfig &config)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (!accept(run))
        return;
    started_ = true;
    pendingLayers_ = layers;
    pendingConfig_ = config;
}

// A flood (a fast run, a window that falls behind) must not queue without bound: a record of 600
// layers weighs about 180 KB. Past this many queued layer-steps (and at least kFoldAboveRecords
// records: a recorded run's player holds back before that, so a file opens step by step) the
// queued records but the newest are folded into chunks, which keep their counts and extremes and
// every non-finite cell: the map and plots say the same, with columns at least a chunk wide.
constexpr std::size_t kFoldAboveLayerSteps = 200000;
constexpr std::size_t kFoldAboveRecords = 256;

void SessionController::stepRecorded(const StepRecordPtr &record)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (!accept(record->run))
        return;
    queued_.push_back(record);
    const std::size_t layers = std::max<std::size_t>(1, record->layers.size());
    if (queued_.size() > std::max(kFoldAboveRecords, kFoldAboveLayerSteps / layers))
        foldQueued();
}

// With mutex_ held: every queued record but the newest into chunks, in step order (they go out
// before the records left, as a file's chunks do).
void SessionController::foldQueued()
{
    std::shared_ptr<StepChunk> fold;
    for (std::size_t i = 0; i + 1 < queued_.size(); ++i) {
        const StepRecord &r = *queued_[i];
        if (!fold || fold->index != chunkOfStep(r.step)) {
            if (fold)
                queuedChunks_.push_back(std::move(fold));
            fold = std::make_shared<StepChunk>(chunkOfStep(r.step), r.layers.size());
            fold->run = r.run;
        }
        fold->add(r);
    }
    if (fold)
        queuedChunks_.push_back(std::move(fold));
    folded_ += queued_.size() - 1;
    queued_.erase(queued_.begin(), queued_.end() - 1);
}

std::size_t SessionController::foldedRecords() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return folded_;
}

void SessionController::stepsChunked(const StepChunkPtr &chunk)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (accept(chunk->run))
        queuedChunks_.push_back(chunk);
}

void SessionController::eventRaised(const Event &event)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (accept(event.run))
        queuedEvents_.push_back(event);
}

void SessionController::stateChanged(SessionState state)
{
    std::lock_guard<std::mutex> lock(mutex_);
    states_.push_back(state);
}

void SessionController::runFinished(const RunSummary &summary)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (!accept(summary.run))
        return;
    finished_ = true;
    pendingSummary_ = summary;
}

std::size_t SessionController::backlog() const
{
    std::lock_guard<std::mutex> lock(mutex_);
    return queued_.size() + queuedChunks_.size();  // a chunk weighs about what a record does
}

// GUI thread.
bool SessionController::settled() const
{
    const SessionState state = source_->state();
    if ((state == SessionState::Running || state == SessionState::Paused) && !source_->waitingAtStepBoundary())
        return false;
    std::lock_guard<std::mutex> lock(mutex_);
    return queued_.empty() && queuedChunks_.empty() && queuedEvents_.empty() && states_.empty() && !started_ &&
           !finished_;
}

void SessionController::drain()
{
    Q_ASSERT(QThread::currentThread() == thread());
    std::vector<StepChunkPtr> chunks;
    std::vector<StepRecordPtr> records;
    std::vector<Event> events;
    std::vector<SessionState> states;
    bool started = false, finished = false;
    int run = 0;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        chunks.swap(queuedChunks_);
        records.swap(queued_);
        events.swap(queuedEvents_);
        states.swap(states_);
        std::swap(started, started_);
        std::swap(finished, finished_);
        run = currentRun_;
        if (started) {
            layers_ = pendingLayers_;
            config_ = pendingConfig_;
        }
        if (finished)
            summary_ = pendingSummary_;
    }
    if (started)
        Q_EMIT runBegun(run);
    if (!chunks.empty())
        Q_EMIT chunksArrived(QVector<StepChunkPtr>(chunks.begin(), chunks.end()));
    if (!records.empty()) {
        ++deliveries_;
        Q_EMIT recordsArrived(QVector<StepRecordPtr>(records.begin(), records.end()));
    }
    if (!events.empty())
        Q_EMIT eventsArrived(QVector<Event>(events.begin(), events.end()));
    for (SessionState s : states)
        Q_EMIT sessionStateChanged(s);
    if (finished)
        Q_EMIT runCompleted(QString::fromStdString(summary_.error));
}

}  // namespace nanscope
