#include "window/session_controller.h"

#include "nanscope/session.h"

#include <QThread>

#include <algorithm>

namespace nanscope {

SessionController::SessionController(std::unique_ptr<RunSource> source, QObject *parent)
    : QObject(parent), source_(source ? std::move(source) : std::make_unique<Session>())
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
    source_ = source ? std::move(source) : std::make_unique<Session>();
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

void SessionController::stepRecorded(const StepRecordPtr &record)
{
    std::lock_guard<std::mutex> lock(mutex_);
    if (accept(record->run))
        queued_.push_back(record);
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
