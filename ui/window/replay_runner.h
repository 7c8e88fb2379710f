#pragma once
// Runs `replayCapsule()` on a BackgroundJob, so the window stays live while a step is computed
// again, bisected and tried with changes. One replay at a time; destroying the runner cancels a
// replay under way and waits for its current computation to end. Once cancel() is called (another
// run is shown), what the old replay still reports is dropped, as the controller drops a replaced
// run's records.
#include "nanscope/replay.h"
#include "window/background_job.h"

#include <QObject>
#include <QString>

namespace nanscope {

class ReplayRunner final : public QObject {
    Q_OBJECT
public:
    explicit ReplayRunner(QObject *parent = nullptr);

    // False while a replay is under way. `step` -1: the capsule replay chooses.
    bool start(const QString &runFile, int step);
    // Stops the replay under way without waiting; it reports nothing more.
    void cancel() { job_.cancel(); }
    bool running() const { return job_.running(); }

Q_SIGNALS:
    void progress(const QString &what);
    void finished(const nanscope::ReplayReport &report);
    void failed(const QString &message);
    // A cancelled replay ended: its report or error was dropped.
    void discarded();

private:
    BackgroundJob job_;  // the last member: destroyed (cancelled, waited for) first
};

}  // namespace nanscope
