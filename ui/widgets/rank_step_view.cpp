#include "widgets/rank_step_view.h"

#include "models/rank_layer_model.h"
#include "models/origin_text.h"

#include <QEvent>
#include <QHBoxLayout>
#include <algorithm>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace nanscope {

namespace {
constexpr qint64 kRefreshMs = 1000;  // at most one read of the ranks' files a second while they grow
}  // namespace

RankStepView::RankStepView(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    auto *bar = new QHBoxLayout;
    stepLabel_ = new QLabel;
    bar->addWidget(stepLabel_);
    stepBox_ = new QSpinBox;
    stepBox_->setObjectName(QStringLiteral("rankStep"));
    stepBox_->setRange(0, 0);
    stepBox_->setKeyboardTracking(false);  // a typed number reads every rank's file once, not per digit
    bar->addWidget(stepBox_);
    firstButton_ = new QPushButton;
    bar->addWidget(firstButton_);
    bar->addStretch(1);
    layout->addLayout(bar);
    summary_ = new QLabel;
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(summary_);

    model_ = new RankLayerModel(this);
    table_ = new QTableView;
    table_->setObjectName(QStringLiteral("rankLayerTable"));
    table_->setModel(model_);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->setWordWrap(false);
    layout->addWidget(table_, 1);

    connect(stepBox_, QOverload<int>::of(&QSpinBox::valueChanged), this, [this] { read(); });
    connect(firstButton_, &QPushButton::clicked, this, [this] {
        if (first_.step >= 0)
            showStep(first_.step);
    });
    connect(table_, &QTableView::activated, this, [this](const QModelIndex &index) {
        Q_EMIT rankLayerActivated(index.data(RankLayerModel::RankRole).toInt(),
                                  index.data(RankLayerModel::LayerIdRole).toInt());
    });
    retranslate();
    clear();
}

void RankStepView::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

void RankStepView::retranslate()
{
    stepLabel_->setText(tr("Step"));
    stepBox_->setToolTip(tr("The step whose ranks the table shows (clicking the map or a plot picks it too)"));
    firstButton_->setText(tr("&First non-finite"));
    firstButton_->setToolTip(tr("The step where a rank of the job went non-finite first"));
    if (ranks_.empty())
        summary_->setText(tr("Open a job's run folder (File › Open job folder…) to compare its ranks step by step."));
    else
        read();  // the summary and the table in the new language
}

void RankStepView::setJob(const std::vector<JobRank> &ranks, const JobFailure &first)
{
    ranks_ = ranks;
    first_ = first;
    firstButton_->setEnabled(first_.step >= 0);
    const int step = std::max(first_.step, 0);
    if (stepBox_->value() == step) {
        read();
    } else {
        stepBox_->setMaximum(std::max(stepBox_->maximum(), step));
        stepBox_->setValue(step);  // reads
    }
}

void RankStepView::clear()
{
    ranks_.clear();
    first_ = {};
    model_->clear();
    firstButton_->setEnabled(false);
    retranslate();
}

void RankStepView::showStep(int step)
{
    if (ranks_.empty() || step < 0)
        return;
    stepBox_->setMaximum(std::max(stepBox_->maximum(), step));
    if (stepBox_->value() == step)
        read();
    else
        stepBox_->setValue(step);
}

int RankStepView::step() const { return model_->jobStep().step; }

bool RankStepView::incomplete() const
{
    const JobStep &shown = model_->jobStep();
    return std::any_of(shown.ranks.begin(), shown.ranks.end(), [](const RankStep &r) { return !r.record; });
}

void RankStepView::refreshIn(qint64 ms)
{
    if (refreshQueued_)
        return;
    refreshQueued_ = true;
    QTimer::singleShot(int(ms), this, [this] {
        refreshQueued_ = false;
        refreshIfIncomplete();
    });
}

void RankStepView::refreshIfIncomplete()
{
    if (ranks_.empty())
        return;
    if (sinceRead_.isValid() && sinceRead_.elapsed() < kRefreshMs) {
        refreshIn(kRefreshMs - sinceRead_.elapsed() + 1);  // the last records may land within the second
        return;
    }
    if (!incomplete() && first_.step >= 0)
        return;
    const int grownTo = model_->jobStep().lastStep;
    first_ = firstJobFailure(ranks_);
    firstButton_->setEnabled(first_.step >= 0);
    read();
    // A rank behind the one shown records the step later, with nothing shown to say so: look again
    // while the job still grows.
    if (incomplete() && model_->jobStep().lastStep > grownTo)
        refreshIn(kRefreshMs);
}

void RankStepView::read()
{
    if (ranks_.empty())
        return;
    sinceRead_.start();
    const JobFailure failure = first_;
    const int firstRank = failure.rankIndex >= 0 ? ranks_[std::size_t(failure.rankIndex)].rank : -1;
    JobStep step = readJobStep(ranks_, stepBox_->value());
    stepBox_->setMaximum(std::max(step.lastStep, stepBox_->value()));
    model_->setJobStep(std::move(step), firstRank);
    describe();
    const int failed = model_->failedRankShown();
    if (failed >= 0) {  // bring the born-here cell into view
        const StepRecordPtr &r = model_->jobStep().ranks[std::size_t(model_->columnOfRank(failed))].record;
        const int row = model_->rowOfLayer(RankLayerModel::originRow(r->origin));
        const QModelIndex cell = model_->index(row, model_->columnOfRank(failed));
        if (cell.isValid())
            table_->scrollTo(cell);
    }
}

void RankStepView::describe()
{
    const JobStep &s = model_->jobStep();
    QStringList lines;
    QStringList finite, missing;
    for (const RankStep &r : s.ranks) {
        if (!r.record)
            missing << QString::number(r.rank);
        else if (r.record->failed())
            lines << tr("Rank %1 went non-finite before the all-reduce: %2.")
                         .arg(r.rank)
                         .arg(describeOrigin(r.record->origin));
        else
            finite << QString::number(r.rank);
    }
    if (lines.isEmpty() && missing.isEmpty())
        lines << tr("Step %1: every rank was finite before the all-reduce.").arg(s.step);
    else if (!finite.isEmpty())
        lines << tr("Finite: rank %1.").arg(finite.join(QStringLiteral(", ")));
    if (!missing.isEmpty())
        lines << tr("No record of step %1 (yet): rank %2.").arg(s.step).arg(missing.join(QStringLiteral(", ")));
    if (first_.step >= 0)
        lines << tr("The job went non-finite first at step %1, on rank %2.")
                     .arg(first_.step)
                     .arg(ranks_[std::size_t(first_.rankIndex)].rank);
    else
        lines << tr("No rank of the job has gone non-finite.");
    summary_->setText(lines.join(QLatin1Char('\n')));
}

QString RankStepView::summaryText() const { return summary_->text(); }

}  // namespace nanscope
