// The classroom controller without a window: a session's challenge states from the runs' verdicts
// (tried, solved, and solved stays solved), the box's mark for the scenario on show only, the
// dialog's table, and a page of its own hiding the challenge.
#include "window/classroom_controller.h"

#include "widgets/challenge_box.h"
#include "widgets/challenges_dialog.h"
#include "widgets/lesson_pane.h"

#include <QTableWidget>
#include <QtTest>

using namespace nanscope;

class TestClassroomController : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void verdictsMakeTheSessionsStates();
    void aPageOfItsOwnHasNoChallenge();
};

namespace {

ChallengeResult verdict(const char *id, bool met) { return ChallengeResult{id, "", met}; }

}  // namespace

void TestClassroomController::verdictsMakeTheSessionsStates()
{
    QWidget window;
    LessonPane lesson;
    ChallengeBox box;
    ClassroomController classroom(&lesson, &box, &window);
    classroom.showScenario(QStringLiteral("nan-input"));
    QVERIFY(!box.solved());

    classroom.noteResult(verdict("nan-input", false), QStringLiteral("nan-input"));
    QCOMPARE(classroom.state(QStringLiteral("nan-input")), ChallengeState::Tried);
    QVERIFY(!box.solved());
    classroom.noteResult(verdict("nan-input", true), QStringLiteral("nan-input"));
    QCOMPARE(classroom.state(QStringLiteral("nan-input")), ChallengeState::Solved);
    QVERIFY(box.solved());
    classroom.noteResult(verdict("nan-input", false), QStringLiteral("nan-input"));  // solved stays solved
    QCOMPARE(classroom.state(QStringLiteral("nan-input")), ChallengeState::Solved);

    // Another scenario's verdict, while log-zero is on show: its state, not the box's mark.
    classroom.showScenario(QStringLiteral("log-zero"));
    QVERIFY(!box.solved());
    classroom.noteResult(verdict("bn-constant", true), QStringLiteral("log-zero"));
    QCOMPARE(classroom.state(QStringLiteral("bn-constant")), ChallengeState::Solved);
    QVERIFY(!box.solved());
    classroom.noteResult(std::nullopt, QStringLiteral("log-zero"));  // a run without a challenge
    QCOMPARE(classroom.state(QStringLiteral("log-zero")), ChallengeState::NotTried);
    classroom.showScenario(QStringLiteral("nan-input"));  // back to a solved one: marked at once
    QVERIFY(box.solved());

    QVERIFY(!classroom.dialog());
    classroom.showChallenges();
    QVERIFY(classroom.dialog());
    QCOMPARE(classroom.dialog()->parentWidget(), &window);
    const QTableWidget *table = classroom.dialog()->table();
    int solved = 0;
    for (int row = 0; row < table->rowCount(); ++row)
        for (int column = 0; column < table->columnCount(); ++column)
            if (const QTableWidgetItem *item = table->item(row, column); item && item->text().contains(QStringLiteral("solved")))
                ++solved;
    QCOMPARE(solved, 2);  // nan-input and bn-constant
}

void TestClassroomController::aPageOfItsOwnHasNoChallenge()
{
    QWidget window;
    LessonPane lesson;
    ChallengeBox box;
    ClassroomController classroom(&lesson, &box, &window);
    classroom.showScenario(QStringLiteral("nan-input"));
    QVERIFY(!box.isHidden());
    classroom.showPage(QStringLiteral("# My model\n\nA page of its own."));
    QVERIFY(box.isHidden());
    QVERIFY(lesson.toPlainText().contains(QStringLiteral("A page of its own.")));
}

QTEST_MAIN(TestClassroomController)
#include "tst_classroom_controller.moc"
