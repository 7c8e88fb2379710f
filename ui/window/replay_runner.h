#pragma once
// Runs `replayCapsule()` on a thread of its own, so the window stays live while a step is
// computed again, bisected and tried with changes. One replay at a time; destroying the runner
// cancels a replay under way and waits for its current computation to end.
#include "nanscope/replay.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <thread>

namespace nanscope {

class ReplayRunner final : public QObject {
    Q_OBJECT
public:
    explicit ReplayRunner(QObject *parent = nullptr);
    ~ReplayRunner() override;

    // False while a replay is under way. `step` -1: the capsule replay chooses.
    bool start(const QString &runFile, int step);

Q_SIGNALS:
    void progress(const QString &what);
    void finished(const nanscope::ReplayReport &report);
    void failed(const QString &message);

private:
    void join();

    std::thread thread_;
    std::atomic<bool> cancel_{false};
    bool running_ = false;
};

}  // namespace nanscope
