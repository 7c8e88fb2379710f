// The challenges in the window: the box below the lesson shows the goal, the hints and the solved
// mark; View > Challenges lists where this session stands with each. Whether a run met its goal
// is the run's own verdict (RunSummary::challenge), decided by the core when the run ends.
#include "window/main_window.h"

#include "widgets/challenge_box.h"
#include "widgets/challenges_dialog.h"
#include "widgets/control_panel.h"

#include <QAction>
#include <QMenu>

namespace nanscope {

void MainWindow::buildChallenges(QMenu *view)
{
    auto *open = new QAction(this);
    open->setObjectName(QStringLiteral("challenges"));
    connect(open, &QAction::triggered, this, &MainWindow::showChallenges);
    view->addAction(open);
    connect(this, &MainWindow::runEnded, this, &MainWindow::noteChallenge);
}

void MainWindow::noteChallenge()
{
    const std::optional<ChallengeResult> &result = controller_.lastSummary().challenge;
    if (!result)
        return;
    const QString id = QString::fromStdString(result->id);
    ChallengeState &state = challengeStates_[id];
    state = result->met || state == ChallengeState::Solved ? ChallengeState::Solved : ChallengeState::Tried;
    if (!controls_->modelSelected() && controls_->scenario() == id)
        challengeBox_->showResult(result->met);
    if (challengesDialog_)
        challengesDialog_->showStates(challengeStates_);
}

void MainWindow::showChallenges()
{
    if (!challengesDialog_)
        challengesDialog_ = new ChallengesDialog(this);
    challengesDialog_->showStates(challengeStates_);
    challengesDialog_->show();
    challengesDialog_->raise();
}

}  // namespace nanscope
