// The classroom in the window: the lesson of the scenario on show, its challenge below it (the goal,
// the hints, the solved mark), View > Challenges for where this session stands with each, and
// presentation mode. Whether a run met its goal is the run's own verdict (RunSummary::challenge),
// decided by the core when the run ends.
#include "window/main_window.h"

#include "widgets/challenge_box.h"
#include "widgets/challenges_dialog.h"
#include "widgets/control_panel.h"
#include "widgets/lesson_pane.h"
#include "widgets/plot_series.h"
#include "window/model_opener.h"

#include <QAction>
#include <QMenu>

#include <qcustomplot.h>

namespace nanscope {

void MainWindow::showLesson()
{
    if (controls_->modelSelected())
        lesson_->showPage(modelPageMarkdown(controls_->modelPath(), controls_->modelInput(), modelGuessNote_));
    else
        lesson_->showLesson(controls_->scenario());
    challengeBox_->showChallenge(controls_->modelSelected() ? QString() : controls_->scenario(),
                                 challengeStates_.value(controls_->scenario()) == ChallengeState::Solved);
}

void MainWindow::setPresentationMode(bool on)
{
    QFont f = normalFont_;
    if (on)
        f.setPointSizeF(normalFont_.pointSizeF() * 1.6);
    setFont(f);
    lesson_->setFont(f);
    for (QCustomPlot *plot : findChildren<QCustomPlot *>())
        setPlotFontSize(plot, f.pointSizeF());
    if (QAction *a = action(QStringLiteral("presentation")); a && a->isChecked() != on)
        a->setChecked(on);
}

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
