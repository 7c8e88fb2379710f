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

bool ReplayRunner::start(const QString &runFile, int step)
{
    if (running_)
        return false;
    join();
    running_ = true;
    cancel_ = false;
    ReplayOptions options;
    options.step = step;
    options.cancel = &cancel_;
    options.progress = [this](const std::string &what) {
        const QString text = QString::fromStdString(what);
        QMetaObject::invokeMethod(
            this, [this, text] { Q_EMIT progress(text); }, Qt::QueuedConnection);
    };
    const std::string path = runFile.toStdString();
    thread_ = std::thread([this, path, options] {
        try {
            const ReplayReport report = replayCapsule(path, options);
            QMetaObject::invokeMethod(
                this,
                [this, report] {
                    running_ = false;
                    Q_EMIT finished(report);
                },
                Qt::QueuedConnection);
        } catch (const std::exception &e) {
            const QString message = QString::fromStdString(e.what());
            QMetaObject::invokeMethod(
                this,
                [this, message] {
                    running_ = false;
                    Q_EMIT failed(message);
                },
                Qt::QueuedConnection);
        }
    });
    return true;
}

}  // namespace nanscope
