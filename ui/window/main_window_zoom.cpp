// Zooming into a stretch of a long run: the window's store keeps buckets as wide as the whole run
// needs; the run file keeps the stretch's single steps and chunks, read back once a zoom or a pan
// settles.
#include "window/main_window.h"

#include "widgets/nan_map_view.h"
#include "widgets/plot_panel.h"
#include "window/stretch_loader.h"

#include <QStatusBar>
#include <QTimer>

#include <algorithm>

namespace nanscope {

namespace {
constexpr int kSettleMs = 150;      // a wheel's clicks or a drag's moves come closer than this
constexpr int kLiveRenewMs = 1000;  // a stretch at a live run's end is read again at most this often
}  // namespace

void MainWindow::buildZoom()
{
    stretchLoader_ = new StretchLoader(this);
    stretchTimer_ = new QTimer(this);
    stretchTimer_->setSingleShot(true);
    stretchTimer_->setInterval(kSettleMs);
    connect(plots_, &PlotPanel::stepRangeChanged, stretchTimer_, qOverload<>(&QTimer::start));
    connect(stretchTimer_, &QTimer::timeout, this, &MainWindow::updateStretch);
    connect(stretchLoader_, &StretchLoader::loaded, this, &MainWindow::showStretch);
    connect(stretchLoader_, &StretchLoader::failed, this, [this](const QString &message) {
        statusBar()->showMessage(tr("Could not read the steps zoomed into: %1").arg(message), 10000);
    });
}

const RunStore &MainWindow::mapStore() const
{
    const RunStore *stretch = stretchLoader_ ? stretchLoader_->store() : nullptr;
    return stretch ? *stretch : store_;
}

void MainWindow::updateStretch()
{
    const auto &buckets = store_.series(Series::Loss).buckets();
    if (plots_->followingRun() || runFile_.isEmpty() || buckets.empty()) {
        dropStretch();
        return;
    }
    const int runFirst = buckets.front().firstStep, runLast = store_.lastStep();
    auto [first, last] = plots_->shownSteps();
    first = std::max(first, runFirst);
    last = std::min(last, runLast);
    if (last < first || (first == runFirst && last == runLast)) {
        dropStretch();  // all of the run, or none of it: the store shows it
        return;
    }
    if (stretchLoader_->wants(first, last))
        return;
    if (recorder_)
        recorder_->flush();  // the steps shown are in the file
    stretchAge_.start();
    stretchLoader_->request(runFile_, stretchStore(store_), first, last);
}

void MainWindow::showStretch()
{
    plots_->setStretch(stretchLoader_->store());
    plots_->refresh(store_);
    map_->refresh(mapStore());
}

void MainWindow::dropStretch()
{
    if (!stretchLoader_ || (!stretchLoader_->store() && !stretchLoader_->loading()))
        return;
    // The views let go of the stretch before it goes.
    plots_->setStretch(nullptr);
    map_->refresh(store_);
    stretchLoader_->clear();
    plots_->refresh(store_);
}

void MainWindow::renewLiveStretch()
{
    if (!stretchLoader_ || !stretchLoader_->store() || stretchLoader_->loading() || stretchAge_.elapsed() < kLiveRenewMs)
        return;
    const int shownLast = plots_->shownSteps().second;
    if (stretchLoader_->lastStep() < shownLast && store_.lastStep() > stretchLoader_->lastStep())
        updateStretch();
}

}  // namespace nanscope
