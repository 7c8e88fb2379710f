#pragma once
// Runs `replayCapsule()` on a thread of its own, so the window stays live while a step is
// computed again, bisected and tried with changes. One replay at a time; destroying the runner
// cancels a replay under way and waits for its current computation to end. Each replay has a
// number: once cancel() is called (another run is shown), what the old replay still reports is
// dropped, as the controller drops a replaced run's records.
#include "nanscope/replay.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <thread>

namespace nanscope {

class ReplayRunner final : public QObject {
    Q_OBJECT
public:
    explicit ReplayRunner(QObject *parent = nullptr);
    ~ReplayRunner() override;

    // False while a replay is under way. `step` -1: the capsule replay chooses.
    bool start(const QString &runFile, int step);
    // Stops the replay under way without waiting; it reports nothing more.
    void cancel();
    bool running() const { return running_; }

Q_SIGNALS:
    void progress(const QString &what);
    void finished(const nanscope::ReplayReport &report);
    void failed(const QString &message);
    // A cancelled replay ended: its report or error was dropped.
    void discarded();

private:
    void join();
    // Posts `report` to the GUI thread if replay `number` is still the current one.
    void deliver(int number, const std::function<void()> &report);

    std::thread thread_;
    std::atomic<bool> cancel_{false};
    bool running_ = false;
    int number_ = 0;  // the current replay's; GUI thread only
};

}  // namespace nanscope
