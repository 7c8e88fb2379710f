#include "window/replay_runner.h"

#include <QMetaObject>

namespace nanscope {

ReplayRunner::ReplayRunner(QObject *parent) : QObject(parent) {}

ReplayRunner::~ReplayRunner()
{
    cancel_ = true;
    join();  // events it posted to this object die with it
}

void ReplayRunner::join()
{
    if (thread_.joinable())
        thread_.join();
}

void ReplayRunner::cancel()
{
    if (!running_)
        return;
    cancel_ = true;  // the thread stops at its next check; start() joins it
    running_ = false;
    ++number_;
}

void ReplayRunner::deliver(int number, const std::function<void()> &report)
{
    QMetaObject::invokeMethod(
        this,
        [this, number, report] {
            if (number != number_) {
                Q_EMIT discarded();
                return;
            }
            running_ = false;
            report();
        },
        Qt::QueuedConnection);
}

bool ReplayRunner::start(const QString &runFile, int step)
{
    if (running_)
        return false;
    join();
    running_ = true;
    cancel_ = false;
    const int number = ++number_;
    ReplayOptions options;
    options.step = step;
    options.cancel = &cancel_;
    options.progress = [this, number](const std::string &what) {
        const QString text = QString::fromStdString(what);
        QMetaObject::invokeMethod(
            this,
            [this, number, text] {
                if (number == number_)
                    Q_EMIT progress(text);
            },
            Qt::QueuedConnection);
    };
    const std::string path = runFile.toStdString();
    thread_ = std::thread([this, number, path, options] {
        try {
            const ReplayReport report = replayCapsule(path, options);
            deliver(number, [this, report] { Q_EMIT finished(report); });
        } catch (const std::exception &e) {
            const QString message = QString::fromStdString(e.what());
            deliver(number, [this, message] { Q_EMIT failed(message); });
        }
    });
    return true;
}

}  // namespace nanscope
