// MainWindow's capsules and replay: Run › Save this step, and Replay this step in the origin panel,
// which computes the step again on a worker from the run file the window shows or records.
#include "window/main_window.h"

#include "widgets/origin_panel.h"
#include "widgets/replay_view.h"
#include "window/replay_runner.h"
#include "window/run_files.h"

#include <QStatusBar>

namespace nanscope {

void MainWindow::buildReplay()
{
    replayRunner_ = new ReplayRunner(this);
    ReplayView *view = origin_->replay();
    connect(view, &ReplayView::replayRequested, this, &MainWindow::replayStep);
    connect(replayRunner_, &ReplayRunner::progress, view, &ReplayView::showProgress);
    connect(replayRunner_, &ReplayRunner::finished, view, &ReplayView::showReport);
    connect(replayRunner_, &ReplayRunner::failed, view, &ReplayView::showError);
}

void MainWindow::saveStep()
{
    if (!files_->recording() || !controller_.capabilities().capsules || !controller_.requestCapsule()) {
        statusBar()->showMessage(tr("Only a live run recorded into a run file keeps capsules"), 5000);
        return;
    }
    statusBar()->showMessage(state_ == SessionState::Paused && origin_->awaitingDecision()
                                 ? tr("Saving a capsule of the paused step into the run file")
                                 : tr("Saving a capsule of the next step into the run file"),
                             5000);
}

void MainWindow::replayStep()
{
    ReplayView *view = origin_->replay();
    if (files_->path().isEmpty()) {
        view->showError(tr("this run is not recorded in a run file (see the event log)"));
        return;
    }
    files_->flush();  // the capsule of the step shown is in the file
    const Origin &first = store_.firstOrigin();
    if (replayRunner_->start(files_->path(), first.valid() ? first.step : -1))
        view->showProgress(tr("starting"));
}

}  // namespace nanscope
