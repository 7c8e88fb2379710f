#include "window/job_controller.h"

#include "widgets/rank_step_view.h"

#include "nanscope/job_folder.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>

#include <algorithm>

namespace nanscope {

namespace {
constexpr int kRankRole = Qt::UserRole + 1;  // of the rank selector's items, whose data is the path
}  // namespace

JobController::JobController(QComboBox *rankBox, QAction *rankAction, RankStepView *view, QDockWidget *dock,
                             OpenFile openFile, QObject *parent)
    : QObject(parent), box_(rankBox), action_(rankAction), view_(view), dock_(dock), openFile_(std::move(openFile))
{
    connect(box_, QOverload<int>::of(&QComboBox::activated), this, [this](int index) { openRank(index, -1); });
    connect(view_, &RankStepView::rankLayerActivated, this, &JobController::showRank);
}

bool JobController::open(const QString &folder, bool follow, QString *error)
{
    std::vector<JobRank> ranks;
    try {
        ranks = jobRunFiles(folder.toStdString());
    } catch (const std::exception &e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
    const JobFailure failure = firstJobFailure(ranks);
    const JobRank &first = ranks[std::size_t(std::max(failure.rankIndex, 0))];
    if (!openFile_(QString::fromStdString(first.path), follow))
        return false;  // the window said why
    follow_ = follow;
    box_->clear();
    for (const JobRank &r : ranks) {
        box_->addItem(tr("rank %1").arg(r.rank), QString::fromStdString(r.path));
        box_->setItemData(box_->count() - 1, r.rank, kRankRole);
    }
    shown_ = int(&first - ranks.data());
    box_->setCurrentIndex(shown_);
    action_->setVisible(true);
    view_->setJob(ranks, failure);
    dock_->show();
    dock_->raise();
    Q_EMIT opened(tr("Opened job %1: %2 ranks, showing rank %3").arg(folder).arg(ranks.size()).arg(first.rank));
    return true;
}

bool JobController::showing() const { return action_->isVisible(); }

void JobController::leave()
{
    action_->setVisible(false);
    box_->clear();
    view_->clear();
    dock_->hide();
    shown_ = -1;
}

void JobController::showRank(int rank, int layer)
{
    const int index = box_->findData(rank, kRankRole);
    if (index < 0)
        return;
    if (index != shown_) {
        openRank(index, layer);
        return;
    }
    Q_EMIT choose(layer, view_->step());
}

bool JobController::openRank(int index, int layer)
{
    if (index == shown_)
        return true;  // shown already: nothing to reopen
    // The layer and the step shown are chosen again once the rank's run has begun.
    pendingLayer_ = layer;
    pendingStep_ = view_->step();
    if (!openFile_(box_->itemData(index).toString(), follow_)) {
        pendingLayer_ = pendingStep_ = -1;
        box_->setCurrentIndex(shown_);  // the selector names the rank shown
        return false;
    }
    shown_ = index;
    box_->setCurrentIndex(index);
    return true;
}

bool JobController::takeChoice(int *layer, int *step)
{
    const bool any = pendingLayer_ != -1 || pendingStep_ >= 0;
    *layer = pendingLayer_;
    *step = pendingStep_;
    pendingLayer_ = pendingStep_ = -1;
    return any;
}

}  // namespace nanscope
