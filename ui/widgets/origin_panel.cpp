#include "widgets/origin_panel.h"

#include "models/origin_text.h"

#include "widgets/replay_view.h"

#include <QEvent>
#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace nanscope {

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
    skip_ = new QPushButton;
    retry_ = new QPushButton;
    rollback_ = new QPushButton;
    continue_ = new QPushButton;
    stop_ = new QPushButton;
    stop_->hide();
    buttons->addWidget(skip_, 0, 0);
    buttons->addWidget(retry_, 0, 1);
    buttons->addWidget(rollback_, 1, 0);
    buttons->addWidget(continue_, 1, 1);
    buttons->addWidget(stop_, 0, 1);  // where Retry is: a Python loop's pause has one or the other
    layout->addLayout(buttons);
    replay_ = new ReplayView;
    layout->addWidget(replay_, 1);

    connect(skip_, &QPushButton::clicked, this, &OriginPanel::skipRequested);
    connect(retry_, &QPushButton::clicked, this, &OriginPanel::retryRequested);
    connect(rollback_, &QPushButton::clicked, this, &OriginPanel::rollbackRequested);
    connect(continue_, &QPushButton::clicked, this, &OriginPanel::continueRequested);
    connect(stop_, &QPushButton::clicked, this, &OriginPanel::stopRequested);
    retranslate();
    clear();
}

void OriginPanel::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

void OriginPanel::retranslate()
{
    skip_->setText(tr("S&kip batch"));
    skip_->setToolTip(tr("Drop this batch and go on with the next one; the weights stay as they are"));
    retry_->setText(tr("Re&try step"));
    retry_->setToolTip(tr("Run this batch again with the controls as they are now (change the LR or clipping first)"));
    rollback_->setText(tr("Roll bac&k"));
    rollback_->setToolTip(tr("Restore the last state that was checked finite and halve the LR"));
    continue_->setText(tr("&Continue"));
    continue_->setToolTip(tr("Apply the update anyway and go on"));
    stop_->setText(tr("S&top the loop"));
    stop_->setToolTip(tr("End the Python loop here: the update is not applied, the run file is closed and "
                         "the loop gets nanscope.Stopped"));
    showText();
}

void OriginPanel::clear()
{
    shown_ = {};
    pausedOn_ = false;
    showText();
    replay_->clear();
    decided();
}

void OriginPanel::showOrigin(const Origin &origin)
{
    shown_ = origin;
    pausedOn_ = false;
    showText();
}

void OriginPanel::showPaused(const Origin &origin, int step, bool pythonLoop)
{
    shown_ = origin;
    pausedOn_ = true;
    pausedStep_ = origin.valid() ? origin.step : step;
    showText();
    awaiting_ = true;
    retry_->setVisible(!pythonLoop);
    stop_->setVisible(pythonLoop);
    for (QPushButton *b : {skip_, retry_, rollback_, continue_, stop_})
        b->setEnabled(true);
}

void OriginPanel::showText()
{
    if (!shown_.valid() && pausedOn_) {  // a Python loop tells the origin once the step is decided
        summary_->setText(tr("Paused before the update of step %1").arg(pausedStep_));
        details_->setText(tr("Its gradients are not finite. The loop waits for a decision; its weights are "
                             "untouched."));
        return;
    }
    if (!shown_.valid()) {
        summary_->setText(tr("No non-finite value so far."));
        details_->clear();
        return;
    }
    summary_->setText(describeOrigin(shown_));
    details_->setText(pausedOn_ ? tr("Paused before the update of step %1: the weights are untouched.\n%2")
                                      .arg(shown_.step)
                                      .arg(explainOrigin(shown_))
                                : explainOrigin(shown_));
}

void OriginPanel::decided()
{
    awaiting_ = false;
    for (QPushButton *b : {skip_, retry_, rollback_, continue_, stop_})
        b->setEnabled(false);
}

QString OriginPanel::text() const { return summary_->text() + QLatin1Char('\n') + details_->text(); }

}  // namespace nanscope
