// MainWindow and the run as it arrives: the controller's batches of records, chunks and events
// fed to the store and the views (at most ~30 times a second), the state, and the status bar.
#include "window/main_window.h"

#include "models/core_text.h"
#include "models/event_log_model.h"
#include "models/layer_tree_model.h"
#include "widgets/control_panel.h"
#include "widgets/nan_map_view.h"
#include "widgets/origin_panel.h"
#include "widgets/plot_panel.h"
#include "widgets/rank_step_view.h"
#include "window/job_controller.h"
#include "window/replay_runner.h"
#include "window/run_files.h"
#include "window/zoom_controller.h"

#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QTableView>
#include <QTreeView>

namespace nanscope {

void MainWindow::onRunBegun(int)
{
    replayRunner_->cancel();
    zoom_->drop();
    store_.reset(controller_.layers());
    plots_->clear();
    map_->clear();
    layerModel_->setLayers(controller_.layers());
    layerView_->expandAll();
    eventModel_->clear();
    eventModel_->setLayers(controller_.layers());
    origin_->clear();
    originShown_ = false;
    lastRecord_.reset();
    rateClock_.start();
    rateSteps_ = 0;
    stepsPerSecond_ = 0;
    deviceLabel_->setText(QString::fromStdString(controller_.runConfig().device));
    int layer = -1, step = -1;
    if (jobs_->takeChoice(&layer, &step)) {  // another rank of a job: at the layer and step shown before
        if (layer != -1)
            selectLayer(layer);
        if (step >= 0)
            plots_->setCursorStep(step);
    }
}

void MainWindow::showFirstOrigin()
{
    if (store_.firstOrigin().valid() && !originShown_ && !origin_->awaitingDecision()) {
        origin_->showOrigin(store_.firstOrigin());
        originShown_ = true;
        if (showingJob())
            rankDock_->raise();  // a job's first question: which rank
        else if (QDockWidget *d = findChild<QDockWidget *>(QStringLiteral("origin")))
            d->raise();
    }
}

void MainWindow::onChunks(const QVector<StepChunkPtr> &chunks)
{
    for (const StepChunkPtr &c : chunks)
        store_.appendChunk(*c);
    showFirstOrigin();
    layerModel_->addChunks(chunks);
    plots_->refresh(store_);
    map_->refresh(zoom_->mapStore());  // the scale's precision comes with the records after the chunks
    if (showingJob())
        rankView_->refreshIfIncomplete();  // the job may still be running
    updateStatus();
}

void MainWindow::onRecords(const QVector<StepRecordPtr> &records)
{
    for (const StepRecordPtr &r : records)
        store_.append(*r);
    showFirstOrigin();
    lastRecord_ = records.back();
    rateSteps_ += records.size();
    layerModel_->addRecords(records);
    plots_->refresh(store_);
    map_->setPrecision(lastRecord_->precision);  // as the step ran: mixed precision may change live
    map_->refresh(zoom_->mapStore());
    zoom_->renewLive();
    if (showingJob())
        rankView_->refreshIfIncomplete();  // the job may still be running
    updateStatus();
}

void MainWindow::onEvents(const QVector<Event> &events)
{
    bool warned = false;
    for (const Event &e : events) {
        if (e.kind == EventKind::ControlChange)
            store_.addControlMark(e.step, e.text);
        if (e.kind == EventKind::Warning && e.layer >= 0) {
            store_.addWarning(e.step, e.layer, e.text);
            warned = true;
        }
        if (e.kind == EventKind::Paused) {  // the paused step's record comes once it is decided
            origin_->showPaused(e.origin, e.step, showingRecordedRun() && controller_.capabilities().controls);
            if (QDockWidget *d = findChild<QDockWidget *>(QStringLiteral("origin")))
                d->raise();
        }
    }
    eventModel_->append(events);
    eventView_->scrollToBottom();
    plots_->refresh(store_);
    if (warned)  // records and events arrive in separate batches: mark the map now
        map_->refresh(zoom_->mapStore());
}

void MainWindow::onState(SessionState state)
{
    state_ = state;
    if (showingRecordedRun())  // a steered loop's controls go grey once it ends
        applyRecordedRunLook();
    updateActions();
    updateStatus();
}

void MainWindow::onFinished(const QString &error)
{
    if (!error.isEmpty())
        warn(tr("The run failed"), error);
    // The session's own rate counts compute time only, over the whole run.
    stepsPerSecond_ = controller_.lastSummary().stepsPerSecond;
    rateClock_.invalidate();
    // The recorder may still be committing the end of the run on the session's thread: once the
    // window says the run ended, its file holds all of it (another window may open it at once).
    files_->flush();
    updateStatus();
    Q_EMIT runEnded();
}

void MainWindow::updateStatus()
{
    if (rateClock_.isValid() && rateClock_.elapsed() >= 500) {
        stepsPerSecond_ = rateSteps_ * 1000.0 / double(rateClock_.restart());
        rateSteps_ = 0;
    }
    // A file whose run never finished (its writer killed or still writing when it was opened) ends
    // here without the run having finished.
    const bool unfinished = showingRecordedRun() && state_ == SessionState::Finished &&
                            !controller_.lastSummary().finished;
    stateLabel_->setText(showingRecordedRun() && state_ == SessionState::Running ? tr("following")
                         : unfinished                                            ? tr("stopped without finishing")
                                                                                 : coreText(sessionStateName(state_)));
    stepLabel_->setText(lastRecord_ ? tr("step %1").arg(lastRecord_->step) : tr("no steps"));
    rateLabel_->setText(tr("%1 steps/s").arg(stepsPerSecond_, 0, 'f', stepsPerSecond_ < 10 ? 1 : 0));
    if (deviceLabel_->text().isEmpty())
        deviceLabel_->setText(controls_->deviceBox()->currentData().toString());
}

QString MainWindow::statusText() const
{
    return QStringList{stateLabel_->text(), stepLabel_->text(), rateLabel_->text(), deviceLabel_->text()}.join(
        QStringLiteral(" · "));
}

}  // namespace nanscope
