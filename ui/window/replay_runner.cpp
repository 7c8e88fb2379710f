#include "window/replay_runner.h"

namespace nanscope {

ReplayRunner::ReplayRunner(QObject *parent) : QObject(parent)
{
    connect(&job_, &BackgroundJob::discarded, this, &ReplayRunner::discarded);
}

bool ReplayRunner::start(const QString &runFile, int step)
{
    if (job_.running())
        return false;
    job_.start([this, path = runFile.toStdString(), step](const std::atomic<bool> &cancelled,
                                                           const BackgroundJob::Post &post) -> BackgroundJob::Delivery {
        ReplayOptions options;
        options.step = step;
        options.cancel = &cancelled;
        options.progress = [this, &post](const std::string &what) {
            post([this, text = QString::fromStdString(what)] { Q_EMIT progress(text); });
        };
        try {
            const ReplayReport report = replayCapsule(path, options);
            return [this, report] { Q_EMIT finished(report); };
        } catch (const std::exception &e) {
            return [this, message = QString::fromStdString(e.what())] { Q_EMIT failed(message); };
        }
    });
    return true;
}

}  // namespace nanscope
