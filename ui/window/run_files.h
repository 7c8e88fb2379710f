#pragma once
// The run file of what the window shows: the live run's own recording (every live run is recorded
// into the runs folder, whose oldest files go once there are more than kRecordedRunsKept) or the
// file opened; the recent runs; a copy saved elsewhere. It owns the live run's RunRecorder, an
// observer of the controller's source, and never blocks the window: the recorder writes on its own
// thread. A QObject of its own, so it is tested without a window.
#include "window/session_controller.h"

#include "nanscope/keep_policy.h"
#include "nanscope/run_recorder.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>

namespace nanscope {

class RunFiles final : public QObject {
    Q_OBJECT
public:
    static constexpr int kRecordedRunsKept = 50;
    static constexpr int kRecentRunsKept = 8;

    explicit RunFiles(SessionController &controller, QObject *parent = nullptr);
    ~RunFiles() override;

    // Where live runs are recorded (the newest kRecordedRunsKept are kept).
    static QString runsFolder();

    // Records the live run about to start into a new file of the runs folder named after
    // `runName`; false, with the reason, when the file cannot be made (the run goes on unrecorded).
    bool recordLiveRun(const QString &runName, QString *error);
    // The live run's recording ends (a reset, a run opened, the window closing): its file stays.
    void stopRecording();
    // The run that was to be recorded did not start: its file goes.
    void dropRecording();
    bool recording() const { return recorder_ != nullptr; }
    // A recorded run is shown: its file, remembered first among the recent runs.
    void opened(const QString &path);
    void clear();  // no file (File › Close run)

    QString path() const { return path_; }
    // Every step recorded so far is in the file (before it is read back or copied).
    void flush();
    bool saveAs(const QString &path, QString *error);
    // The steps of the file as CSV (`nanscope export`'s), every step shown so far included.
    bool exportCsv(const QString &path, QString *error);
    QStringList recentRuns() const;

    // What the live runs' files keep of each layer's health (`auto` unless set), from the next run on.
    void setKeep(const KeepPolicy &keep) { keep_ = keep; }
    const KeepPolicy &keep() const { return keep_; }

Q_SIGNALS:
    // The recorder could not write (a full disk): the run goes on unrecorded. On the GUI thread.
    void recordingFailed(const QString &message);

private:
    void remember(const QString &path);

    SessionController &controller_;
    std::unique_ptr<RunRecorder> recorder_;
    QString path_;
    KeepPolicy keep_;
};

}  // namespace nanscope
