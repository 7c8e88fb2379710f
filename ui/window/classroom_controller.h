#pragma once
// The classroom in the window: the lesson of what the window shows (a scenario's lesson, or a page
// of its own for a model or a recorded run), the scenario's challenge below it, and where this
// session stands with each challenge (View › Challenges). Whether a run met its goal is the run's
// own verdict (RunSummary::challenge), decided by the core when the run ends; this controller keeps
// the session's tally of them and shows it.
#include "widgets/challenges_dialog.h"

#include "nanscope/records.h"

#include <QMap>
#include <QObject>
#include <QString>

#include <optional>

class QWidget;

namespace nanscope {

class ChallengeBox;
class LessonPane;

class ClassroomController final : public QObject {
    Q_OBJECT
public:
    // `dialogParent`: the window View › Challenges opens over.
    ClassroomController(LessonPane *lesson, ChallengeBox *box, QWidget *dialogParent);

    // A scenario's lesson and challenge (solved already when a run of this session met it).
    void showScenario(const QString &scenario);
    // A page of its own (a model's, a recorded run's): no challenge.
    void showPage(const QString &markdown);
    // A run ended with `result` (none: the run had no challenge); `shown`: the scenario on show
    // ("" when none is), whose box shows the verdict.
    void noteResult(const std::optional<ChallengeResult> &result, const QString &shown);
    void showChallenges();

    ChallengeState state(const QString &scenario) const { return states_.value(scenario, ChallengeState::NotTried); }
    ChallengesDialog *dialog() const { return dialog_; }  // null until first asked for

private:
    LessonPane *lesson_;
    ChallengeBox *box_;
    QWidget *dialogParent_;
    ChallengesDialog *dialog_ = nullptr;
    QMap<QString, ChallengeState> states_;  // by scenario id, this session's runs
};

}  // namespace nanscope
