#include "widgets/challenge_box.h"

#include "models/core_text.h"

#include "nanscope/challenge.h"

#include <QEvent>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace nanscope {

ChallengeBox::ChallengeBox(QWidget *parent) : QFrame(parent)
{
    setObjectName(QStringLiteral("challengeBox"));
    setFrameShape(QFrame::StyledPanel);
    title_ = new QLabel;
    goal_ = new QLabel;
    goal_->setObjectName(QStringLiteral("challengeGoal"));
    hints_ = new QLabel;
    hints_->setObjectName(QStringLiteral("challengeHints"));
    state_ = new QLabel;
    state_->setObjectName(QStringLiteral("challengeState"));
    for (QLabel *l : {goal_, hints_, state_}) {
        l->setWordWrap(true);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    hint_ = new QPushButton;
    hint_->setObjectName(QStringLiteral("challengeHintButton"));
    auto *column = new QVBoxLayout(this);
    column->addWidget(title_);
    column->addWidget(goal_);
    column->addWidget(hints_);
    column->addWidget(hint_, 0, Qt::AlignLeft);
    column->addWidget(state_);
    connect(hint_, &QPushButton::clicked, this, [this] {
        if (challenge_ && hintsShown_ < int(challenge_->hints.size()))
            ++hintsShown_;
        retranslate();
    });
    hide();
}

void ChallengeBox::showChallenge(const QString &scenario, bool solved)
{
    challenge_ = findChallenge(scenario.toStdString());
    hintsShown_ = 0;
    solved_ = solved;
    tried_ = false;
    setVisible(challenge_ != nullptr);
    retranslate();
}

void ChallengeBox::showResult(bool met)
{
    tried_ = true;
    solved_ = solved_ || met;
    retranslate();
}

void ChallengeBox::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QFrame::changeEvent(event);
}

void ChallengeBox::retranslate()
{
    if (!challenge_)
        return;
    title_->setText(QStringLiteral("<b>%1</b>").arg(tr("Challenge").toHtmlEscaped()));
    goal_->setText(coreText(challenge_->goal));
    QStringList shown;
    for (int i = 0; i < hintsShown_; ++i)
        shown << tr("Hint %1: %2").arg(i + 1).arg(coreText(challenge_->hints[std::size_t(i)]));
    hints_->setText(shown.join(QLatin1Char('\n')));
    hints_->setVisible(hintsShown_ > 0);
    const int total = int(challenge_->hints.size());
    hint_->setText(tr("Show a hint (%1 of %2)").arg(std::min(hintsShown_ + 1, total)).arg(total));
    hint_->setEnabled(hintsShown_ < total);
    if (solved_) {
        state_->setText(QStringLiteral("<b style='color:#2e7d32'>✔ %1</b>").arg(tr("Solved").toHtmlEscaped()));
        state_->setToolTip(tr("A run of this session met the goal"));
    } else {
        state_->setText(tried_ ? tr("Not met yet: the last run ended short of the goal.")
                               : tr("Not met yet: change the controls, start a run, and the run checks the goal when it ends."));
        state_->setToolTip(QString());
    }
}

}  // namespace nanscope
