#pragma once
// The window's background work, written once: one job at a time on a thread of its own (a replay,
// a comparison's read, a zoomed stretch's read). Each job has a number: a newer start() or a
// cancel() makes what an older job still delivers dropped, and tells that job so (its
// `cancelled` flag, which it checks between two of its computations). What a job hands back runs
// on the GUI thread. Destroying a BackgroundJob cancels the job under way and waits for it.
#include <QObject>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

namespace nanscope {

class BackgroundJob final : public QObject {
    Q_OBJECT
public:
    // What a finished job runs on the GUI thread, if it is still the current job then; may be empty.
    using Delivery = std::function<void()>;
    // Runs a function on the GUI thread if the job is still the current one then (progress).
    using Post = std::function<void(std::function<void()>)>;
    // The job, run on the worker. It must not throw: it hands back its error as a Delivery too.
    using Work = std::function<Delivery(const std::atomic<bool> &cancelled, const Post &post)>;

    explicit BackgroundJob(QObject *parent = nullptr);
    ~BackgroundJob() override;

    // Cancels the job under way and waits for it to end, then starts `work`.
    void start(Work work);
    // What the job under way delivers is dropped; it is told to stop, and not waited for.
    void cancel();
    // A job was started and has neither delivered nor been cancelled.
    bool running() const { return running_; }

Q_SIGNALS:
    // A job that was no longer the current one ended: what it delivered was dropped.
    void discarded();

private:
    void join();

    std::thread thread_;
    std::shared_ptr<std::atomic<bool>> cancelled_;  // the current job's
    bool running_ = false;
    int number_ = 0;  // the current job's; GUI thread only
};

}  // namespace nanscope
