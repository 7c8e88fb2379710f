#include "window/run_files.h"

#include "nanscope/run_file.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

#include <fstream>

namespace nanscope {

namespace {

const QString kRecentKey = QStringLiteral("runs/recent");

// The oldest recorded runs go once there are more than kRecordedRunsKept: a teacher's laptop
// must not fill up with demo runs.
void pruneRunsFolder(const QString &folder)
{
    QDir dir(folder);
    const QFileInfoList files =
        dir.entryInfoList({QStringLiteral("*.nsrun")}, QDir::Files, QDir::Time);  // newest first
    for (int i = RunFiles::kRecordedRunsKept - 1; i < files.size(); ++i)
        QFile::remove(files[i].absoluteFilePath());
}

}  // namespace

RunFiles::RunFiles(SessionController &controller, QObject *parent) : QObject(parent), controller_(controller) {}

RunFiles::~RunFiles() { stopRecording(); }  // before the recorder dies: the source must not call it any more

QString RunFiles::runsFolder()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/runs");
}

bool RunFiles::recordLiveRun(const QString &runName, QString *error)
{
    stopRecording();
    const QString folder = runsFolder();
    QDir().mkpath(folder);
    pruneRunsFolder(folder);
    const QString path = folder + QLatin1Char('/') +
                         QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz")) +
                         QLatin1Char('-') + runName + QString::fromLatin1(kRunFileExtension);
    RecorderOptions options;
    options.keep = keep_;
    options.onError = [this](const std::string &message) {  // the writer's thread
        const QString text = QString::fromStdString(message);
        QMetaObject::invokeMethod(this, [this, text] { Q_EMIT recordingFailed(text); }, Qt::QueuedConnection);
    };
    try {
        recorder_ = std::make_unique<RunRecorder>(path.toStdString(), options);
    } catch (const RunFileError &e) {
        if (error)
            *error = QString::fromStdString(e.what());
        path_.clear();
        return false;
    }
    controller_.addObserver(recorder_.get());
    path_ = path;
    return true;
}

void RunFiles::stopRecording()
{
    if (!recorder_)
        return;
    controller_.removeObserver(recorder_.get());
    recorder_->close();
    recorder_.reset();
}

void RunFiles::dropRecording()
{
    const bool recorded = recording();
    stopRecording();
    if (recorded)
        QFile::remove(path_);
    path_.clear();
}

void RunFiles::opened(const QString &path)
{
    stopRecording();
    path_ = path;
    remember(path);
}

void RunFiles::clear()
{
    stopRecording();
    path_.clear();
}

void RunFiles::flush()
{
    if (recorder_)
        recorder_->flush();
}

bool RunFiles::saveAs(const QString &path, QString *error)
{
    if (path_.isEmpty()) {
        if (error)
            *error = tr("there is no run to save yet");
        return false;
    }
    flush();  // everything shown so far is in the file
    try {
        copyRunFile(path_.toStdString(), path.toStdString());
    } catch (const RunFileError &e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
    return true;
}

bool RunFiles::exportCsv(const QString &path, QString *error)
{
    const auto fail = [error](const QString &message) {
        if (error)
            *error = message;
        return false;
    };
    if (path_.isEmpty())
        return fail(tr("this run was not recorded into a run file (see the event log): there is nothing to export"));
    flush();  // every step shown so far is in the file
    std::ofstream out(path.toStdString(), std::ios::trunc);
    if (!out)
        return fail(tr("%1: cannot write the CSV file").arg(path));
    try {
        writeRunCsv(RunFile(path_.toStdString()), out);
    } catch (const RunFileError &e) {
        return fail(QString::fromStdString(e.what()));
    }
    out.flush();
    return out ? true : fail(tr("%1: writing the CSV file failed (is the disk full?)").arg(path));
}

QStringList RunFiles::recentRuns() const { return QSettings().value(kRecentKey).toStringList(); }

void RunFiles::remember(const QString &path)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList runs = recentRuns();
    runs.removeAll(absolute);
    runs.prepend(absolute);
    while (runs.size() > kRecentRunsKept)
        runs.removeLast();
    QSettings().setValue(kRecentKey, runs);
}

}  // namespace nanscope
