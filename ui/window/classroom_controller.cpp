#include "window/classroom_controller.h"

#include "widgets/challenge_box.h"
#include "widgets/lesson_pane.h"

namespace nanscope {

ClassroomController::ClassroomController(LessonPane *lesson, ChallengeBox *box, QWidget *dialogParent)
    : QObject(dialogParent), lesson_(lesson), box_(box), dialogParent_(dialogParent)
{
}

void ClassroomController::showScenario(const QString &scenario)
{
    lesson_->showLesson(scenario);
    box_->showChallenge(scenario, state(scenario) == ChallengeState::Solved);
}

void ClassroomController::showPage(const QString &markdown)
{
    lesson_->showPage(markdown);
    box_->showChallenge(QString(), false);  // the box hides
}

void ClassroomController::noteResult(const std::optional<ChallengeResult> &result, const QString &shown)
{
    if (!result)
        return;
    const QString id = QString::fromStdString(result->id);
    ChallengeState &state = states_[id];
    state = result->met || state == ChallengeState::Solved ? ChallengeState::Solved : ChallengeState::Tried;
    if (shown == id)
        box_->showResult(result->met);
    if (dialog_)
        dialog_->showStates(states_);
}

void ClassroomController::showChallenges()
{
    if (!dialog_)
        dialog_ = new ChallengesDialog(dialogParent_);
    dialog_->showStates(states_);
    dialog_->show();
    dialog_->raise();
}

}  // namespace nanscope
