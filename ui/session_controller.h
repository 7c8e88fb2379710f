#pragma once
// The GUI's observer of a Session. Records arrive on the worker thread and are queued under a
// short lock; a timer on the GUI thread hands them over in batches, so the window repaints at
// most ~30 times a second whatever the step rate. Records of a replaced run are dropped.
#include "nanscope/session.h"

#include <QObject>
#include <QTimer>
#include <QVector>

#include <mutex>
#include <vector>

Q_DECLARE_METATYPE(nanscope::StepRecordPtr)
Q_DECLARE_METATYPE(nanscope::Event)

namespace nanscope {

class SessionController final : public QObject, private SessionObserver {
    Q_OBJECT
public:
    explicit SessionController(QObject *parent = nullptr);
    ~SessionController() override;

    Session &session() { return session_; }
    bool start(const RunConfig &config, QString *error);
    // Stops the current run and drops whatever it still delivers (the window was reset).
    void discardCurrentRun();
    const std::vector<Layer> &layers() const { return layers_; }
    const RunConfig &runConfig() const { return config_; }
    const RunSummary &lastSummary() const { return summary_; }
    int deliveries() const { return deliveries_; }
    // The observer face of the controller, for feeding it records that do not come from its own
    // session (the GUI benchmark replays synthetic runs through it).
    SessionObserver &feed() { return *this; }

Q_SIGNALS:
    void runBegun(int run);
    void recordsArrived(const QVector<nanscope::StepRecordPtr> &records);
    void eventsArrived(const QVector<nanscope::Event> &events);
    void sessionStateChanged(int state);
    // The summary is lastSummary(); `error` is empty when the run ended normally.
    void runCompleted(const QString &error);

private:
    void runStarted(int run, const std::vector<Layer> &layers, const RunConfig &config) override;
    void stepRecorded(const StepRecordPtr &record) override;
    void eventRaised(const Event &event) override;
    void stateChanged(SessionState state) override;
    void runFinished(const RunSummary &summary) override;
    void drain();

    Session session_;
    QTimer flushTimer_;
    std::mutex mutex_;
    std::vector<StepRecordPtr> queued_;
    std::vector<Event> queuedEvents_;
    bool started_ = false;
    std::vector<Layer> pendingLayers_;
    RunConfig pendingConfig_;
    int pendingRun_ = 0;
    bool finished_ = false;
    RunSummary pendingSummary_;
    std::vector<SessionState> states_;
    std::vector<Layer> layers_;
    RunConfig config_;
    RunSummary summary_;
    int currentRun_ = 0;
    int deliveries_ = 0;
};

}  // namespace nanscope
