#include "window/background_job.h"

#include <QMetaObject>

namespace nanscope {

BackgroundJob::BackgroundJob(QObject *parent) : QObject(parent) {}

BackgroundJob::~BackgroundJob()
{
    cancel();
    join();  // what it posts to this object dies with it
}

void BackgroundJob::join()
{
    if (thread_.joinable())
        thread_.join();
}

void BackgroundJob::cancel()
{
    if (cancelled_)
        *cancelled_ = true;
    if (running_)
        ++number_;
    running_ = false;
}

void BackgroundJob::start(Work work)
{
    cancel();
    join();
    const int number = ++number_;
    running_ = true;
    cancelled_ = std::make_shared<std::atomic<bool>>(false);
    thread_ = std::thread([this, number, work = std::move(work), cancelled = cancelled_] {
        const Post post = [this, number](std::function<void()> f) {
            QMetaObject::invokeMethod(
                this,
                [this, number, f = std::move(f)] {
                    if (number == number_)
                        f();
                },
                Qt::QueuedConnection);
        };
        Delivery delivery = work(*cancelled, post);
        QMetaObject::invokeMethod(
            this,
            [this, number, delivery = std::move(delivery)] {
                if (number != number_) {
                    Q_EMIT discarded();
                    return;
                }
                running_ = false;
                if (delivery)
                    delivery();
            },
            Qt::QueuedConnection);
    });
}

}  // namespace nanscope
