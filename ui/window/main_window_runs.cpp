// MainWindow and run files: a recorded run is opened (File menu, recent runs, a drop, the command
// line) as the controller's source, shown as it was live, and followed while its writer still
// writes; a job's folder through JobController. The live run's recording is RunFiles'.
#include "window/main_window.h"

#include "window/classroom_controller.h"
#include "window/job_controller.h"
#include "window/recorded_loop_page.h"
#include "window/run_files.h"

#include "widgets/control_panel.h"

#include "nanscope/recorded_run.h"
#include "nanscope/run_file.h"

#include <QAction>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>
#include <QStatusBar>

namespace nanscope {

QString MainWindow::runsFolder() { return RunFiles::runsFolder(); }

QString MainWindow::runFile() const { return files_->path(); }

void MainWindow::setRecordingKeep(const KeepPolicy &keep) { files_->setKeep(keep); }

bool MainWindow::saveRunAs(const QString &path, QString *error) { return files_->saveAs(path, error); }

QStringList MainWindow::recentRuns() const { return files_->recentRuns(); }

bool MainWindow::openRun(const QString &path, bool follow)
{
    if (QFileInfo(path).isDir()) {
        QString error;
        if (!jobs_->open(path, follow, &error)) {
            if (!error.isEmpty())
                warn(tr("Cannot open the run"), error);
            return false;
        }
        return true;
    }
    jobs_->leave();
    return openRunFile(path, follow);
}

bool MainWindow::showingJob() const { return jobs_->showing(); }

bool MainWindow::openRunFile(const QString &path, bool follow)
{
    RecordedRunOptions options;
    options.follow = follow;
    options.chunkedAbove = openChunkedAbove_;
    options.coarseAbove = openCoarseAbove_;
    std::unique_ptr<RecordedRun> run;
    try {
        run = std::make_unique<RecordedRun>(path.toStdString(), options);
    } catch (const std::exception &e) {
        warn(tr("Cannot open the run"), QString::fromStdString(e.what()));
        return false;
    }
    const RunFileInfo info = run->info();
    files_->stopRecording();  // while the live source it observes is still there
    if (!showingRecordedRun()) {  // the live settings come back with File › Close run
        QSettings settings;
        controls_->saveSettings(settings);
    }
    controller_.setSource(std::move(run));
    files_->opened(path);
    controls_->showRunConfig(info.config);
    applyRecordedRunLook();
    if (!info.scenario.empty())
        classroom_->showScenario(QString::fromStdString(info.scenario));
    else if (info.config.isRecordedLoop())
        classroom_->showPage(recordedLoopPage(info, path));
    else
        classroom_->showPage(tr("# Recorded run of a model\n\n`%1` (sha256 `%2`), recorded with NaNScope %3 on %4.")
                              .arg(QString::fromStdString(info.modelPath), QString::fromStdString(info.modelSha256),
                                   QString::fromStdString(info.nanscopeVersion), QString::fromStdString(info.created)));
    QString error;
    controller_.start(info.config, &error);  // plays the file; a recorded run cannot refuse
    statusBar()->showMessage(tr("Opened %1").arg(path), 5000);
    updateActions();
    return true;
}

void MainWindow::applyRecordedRunLook()
{
    const bool watched = showingRecordedRun();
    // A Python loop followed while it records takes its rate, clipping and guard from here.
    const bool steered = watched && controller_.capabilities().controls;
    controls_->setEnabled(!watched || steered);
    controls_->setSteeringOnly(steered);
    controls_->setToolTip(steered ? tr("A Python loop that is recording: the learning rate, clipping, the recovery "
                                       "policy and pause-on-non-finite reach it at its next step.")
                          : watched ? tr("A recorded run: its controls were applied when it ran and cannot "
                                         "change it now. File › Close run trains live again.")
                                    : QString());
    const QString file = files_->path();
    setWindowTitle(watched && !file.isEmpty() ? tr("NaNScope — %1").arg(QFileInfo(file).fileName()) : QStringLiteral("NaNScope"));
    if (QAction *a = action(QStringLiteral("closeRun")))
        a->setEnabled(watched);
}

void MainWindow::closeRun()
{
    if (!showingRecordedRun())
        return;
    controller_.setSource(nullptr);
    files_->clear();
    jobs_->leave();
    applyRecordedRunLook();
    resetRun();
    controls_->restoreSettings(QSettings());
    showLesson();
    updateActions();
}

void MainWindow::fillRecentRunsMenu()
{
    recentMenu_->clear();
    const QStringList runs = recentRuns();
    for (const QString &path : runs)
        recentMenu_->addAction(QFileInfo(path).fileName(), this, [this, path] { openRun(path); })->setToolTip(path);
    if (runs.isEmpty())
        recentMenu_->addAction(tr("(none yet)"))->setEnabled(false);
}

}  // namespace nanscope
