#include "session_controller.h"

#include <QThread>

namespace nanscope {

SessionController::SessionController(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<nanscope::StepRecordPtr>();
    qRegisterMetaType<nanscope::Event>();
    flushTimer_.setInterval(33);
    connect(&flushTimer_, &QTimer::timeout, this, &SessionController::drain);
    flushTimer_.start();
    session_.addObserver(this);
}

SessionController::~SessionController()
{
    session_.stop();
    session_.wait(10000);
    session_.removeObserver(this);
}

bool SessionController::start(const RunConfig &config, QString *error)
{
    std::string message;
    const bool ok = session_.start(config, &message);
    if (!ok && error)
        *error = QString::fromStdString(message);
    if (ok) {
        std::lock_guard<std::mutex> lock(mutex_);
        currentRun_ = session_.runId();
    }
    return ok;
}

void SessionController::discardCurrentRun()
{
    session_.stop();
    std::lock_guard<std::mutex> lock(mutex_);
    pendingRun_ = -1;
    queued_.clear();
    queuedEvents_.clear();
    finished_ = false;
}

// Worker thread: only queue.
void SessionController::runStarted(int run, const std::vector<Layer> &layers, const RunConfig &config)
{
    std::lock_guard<std::mutex> lock(mutex_);
    queued_.clear();
    queuedEvents_.clear();
    started_ = true;
    finished_ = false;
    pendingRun_ = run;
    pendingLayers_ = layers;
    pendingConfig_ = config;
}

void SessionController::stepRecorded(const StepRecordPtr &record)
{
    std::lock_guard<std::mutex> lock(mutex_);
    queued_.push_back(record);
}

void SessionController::eventRaised(const Event &event)
{
    std::lock_guard<std::mutex> lock(mutex_);
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
    finished_ = true;
    pendingSummary_ = summary;
}

// GUI thread.
void SessionController::drain()
{
    Q_ASSERT(QThread::currentThread() == thread());
    std::vector<StepRecordPtr> records;
    std::vector<Event> events;
    std::vector<SessionState> states;
    bool started = false, finished = false;
    int run = 0;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        records.swap(queued_);
        events.swap(queuedEvents_);
        states.swap(states_);
        std::swap(started, started_);
        std::swap(finished, finished_);
        run = pendingRun_;
        if (started) {
            layers_ = pendingLayers_;
            config_ = pendingConfig_;
        }
        if (finished)
            summary_ = pendingSummary_;
    }
    if (started)
        Q_EMIT runBegun(run);
    QVector<StepRecordPtr> current;
    current.reserve(int(records.size()));
    for (const StepRecordPtr &r : records)
        if (r->run == run)
            current.push_back(r);
    if (!current.isEmpty()) {
        ++deliveries_;
        Q_EMIT recordsArrived(current);
    }
    if (!events.empty())
        Q_EMIT eventsArrived(QVector<Event>(events.begin(), events.end()));
    for (SessionState s : states)
        Q_EMIT sessionStateChanged(int(s));
    if (finished)
        Q_EMIT runCompleted(QString::fromStdString(summary_.error));
}

}  // namespace nanscope
