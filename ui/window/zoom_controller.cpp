#include "window/zoom_controller.h"

#include "widgets/nan_map_view.h"
#include "widgets/plot_panel.h"

#include <algorithm>

namespace nanscope {

namespace {
constexpr int kSettleMs = 150;      // a wheel's clicks or a drag's moves come closer than this
constexpr int kLiveRenewMs = 1000;  // a stretch at a live run's end is read again at most this often
}  // namespace

ZoomController::ZoomController(PlotPanel *plots, NanMapView *map, const RunStore &store,
                               std::function<QString()> runFile, std::function<void()> flush, QObject *parent)
    : QObject(parent), plots_(plots), map_(map), store_(store), runFile_(std::move(runFile)), flush_(std::move(flush))
{
    settle_.setSingleShot(true);
    settle_.setInterval(kSettleMs);
    connect(plots_, &PlotPanel::stepRangeChanged, &settle_, qOverload<>(&QTimer::start));
    connect(&settle_, &QTimer::timeout, this, &ZoomController::update);
    connect(&loader_, &StretchLoader::loaded, this, &ZoomController::show);
    connect(&loader_, &StretchLoader::failed, this, &ZoomController::failed);
}

const RunStore &ZoomController::mapStore() const
{
    const RunStore *stretch = loader_.store();
    return stretch ? *stretch : store_;
}

void ZoomController::update()
{
    const auto &buckets = store_.series(Series::Loss).buckets();
    const QString file = runFile_();
    if (plots_->followingRun() || file.isEmpty() || buckets.empty()) {
        drop();
        return;
    }
    const int runFirst = buckets.front().firstStep, runLast = store_.lastStep();
    auto [first, last] = plots_->shownSteps();
    first = std::max(first, runFirst);
    last = std::min(last, runLast);
    if (last < first || (first == runFirst && last == runLast)) {
        drop();  // all of the run, or none of it: the store shows it
        return;
    }
    if (loader_.wants(first, last))
        return;
    if (flush_)
        flush_();  // the steps shown are in the file
    age_.start();
    loader_.request(file, stretchStore(store_), first, last);
}

void ZoomController::show()
{
    plots_->setStretch(loader_.store());
    plots_->refresh(store_);
    map_->refresh(mapStore());
}

void ZoomController::drop()
{
    if (!loader_.store() && !loader_.loading())
        return;
    // The views let go of the stretch before it goes.
    plots_->setStretch(nullptr);
    map_->refresh(store_);
    loader_.clear();
    plots_->refresh(store_);
}

void ZoomController::renewLive()
{
    if (!loader_.store() || loader_.loading() || age_.elapsed() < kLiveRenewMs)
        return;
    const int shownLast = plots_->shownSteps().second;
    if (loader_.lastStep() < shownLast && store_.lastStep() > loader_.lastStep())
        update();
}

}  // namespace nanscope
