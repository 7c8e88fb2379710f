#include "widgets/origin_panel.h"

#include "widgets/replay_view.h"

#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace nanscope {

QString describeOrigin(const Origin &o)
{
    if (!o.valid())
        return QObject::tr("No non-finite value so far.");
    QString where = QObject::tr("Step %1, phase %2").arg(o.step).arg(QString::fromLatin1(phaseName(o.phase)));
    if (o.layer >= 0)
        where += QObject::tr(", layer '%1' (%2)")
                     .arg(o.layerPath.empty() ? QObject::tr("model") : QString::fromStdString(o.layerPath),
                          o.produced ? QObject::tr("produced it") : QObject::tr("passed it on"));
    if (!o.op.empty())
        where += QObject::tr(", op %1").arg(QString::fromStdString(o.op));
    if (!o.source.empty())
        where += QObject::tr(", at %1").arg(QString::fromStdString(o.source));
    return where;
}

OriginPanel::OriginPanel(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    summary_ = new QLabel;
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont bold = summary_->font();
    bold.setBold(true);
    summary_->setFont(bold);
    details_ = new QLabel;
    details_->setWordWrap(true);
    details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(summary_);
    layout->addWidget(details_);

    auto *buttons = new QGridLayout;
    skip_ = new QPushButton(tr("S&kip batch"));
    skip_->setToolTip(tr("Drop this batch and go on with the next one; the weights stay as they are"));
    retry_ = new QPushButton(tr("Re&try step"));
    retry_->setToolTip(tr("Run this batch again with the controls as they are now (change the LR or clipping first)"));
    rollback_ = new QPushButton(tr("Roll bac&k"));
    rollback_->setToolTip(tr("Restore the last state that was checked finite and halve the LR"));
    continue_ = new QPushButton(tr("&Continue"));
    continue_->setToolTip(tr("Apply the update anyway and go on"));
    buttons->addWidget(skip_, 0, 0);
    buttons->addWidget(retry_, 0, 1);
    buttons->addWidget(rollback_, 1, 0);
    buttons->addWidget(continue_, 1, 1);
    layout->addLayout(buttons);
    replay_ = new ReplayView;
    layout->addWidget(replay_, 1);

    connect(skip_, &QPushButton::clicked, this, &OriginPanel::skipRequested);
    connect(retry_, &QPushButton::clicked, this, &OriginPanel::retryRequested);
    connect(rollback_, &QPushButton::clicked, this, &OriginPanel::rollbackRequested);
    connect(continue_, &QPushButton::clicked, this, &OriginPanel::continueRequested);
    clear();
}

void OriginPanel::clear()
{
    summary_->setText(tr("No non-finite value so far."));
    details_->clear();
    replay_->clear();
    decided();
}

void OriginPanel::showOrigin(const Origin &origin)
{
    summary_->setText(describeOrigin(origin));
    details_->setText(QString::fromStdString(origin.explanation));
}

void OriginPanel::showPaused(const Origin &origin)
{
    showOrigin(origin);
    details_->setText(tr("Paused before the update of step %1: the weights are untouched.\n%2")
                          .arg(origin.step)
                          .arg(QString::fromStdString(origin.explanation)));
    awaiting_ = true;
    for (QPushButton *b : {skip_, retry_, rollback_, continue_})
        b->setEnabled(true);
}

void OriginPanel::decided()
{
    awaiting_ = false;
    for (QPushButton *b : {skip_, retry_, rollback_, continue_})
        b->setEnabled(false);
}

QString OriginPanel::text() const { return summary_->text() + QLatin1Char('\n') + details_->text(); }

}  // namespace nanscope
