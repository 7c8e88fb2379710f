// The classroom in the window: the scenario's own fix in the Controls panel (only where the
// scenario has one), the challenge below the lesson with its hints one at a time, the solved mark
// when a run meets the goal, and View > Challenges following the session.
#include "live_session.h"
#include "widgets/challenge_box.h"
#include "widgets/challenges_dialog.h"
#include "widgets/control_panel.h"
#include "widgets/scenario_fix_edit.h"
#include "window/main_window.h"

#include "nanscope/challenge.h"

#include <QAction>
#include <QCheckBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QStandardPaths>
#include <QtTest>

using namespace nanscope;

class TestChallengeWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Settings and the runs folder of the test's own (the challenges' results are kept there).
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
    void fixRowFollowsTheScenario_data();
    void fixRowFollowsTheScenario();
    void fixReachesTheRunAndSolvesTheChallenge();
    void hintsComeOneAtATime();
};

namespace {

bool runToEnd(MainWindow &w, int timeoutMs = 60000)
{
    QSignalSpy ended(&w, &MainWindow::runEnded);
    return w.startRun() && ended.wait(timeoutMs);
}

QString label(const MainWindow &w, const char *name)
{
    return w.findChild<QLabel *>(QLatin1String(name))->text();
}

}  // namespace

void TestChallengeWindow::fixRowFollowsTheScenario_data()
{
    QTest::addColumn<QString>("id");
    for (const ScenarioInfo &s : scenarios())
        QTest::addRow("%s", s.id.c_str()) << QString::fromStdString(s.id);
}

void TestChallengeWindow::fixRowFollowsTheScenario()
{
    QFETCH(QString, id);
    MainWindow w(newLiveSession);
    w.show();
    w.selectScenario(id);
    const ScenarioFix fix = findScenario(id.toStdString())->fix;
    ScenarioFixEdit *edit = w.controlPanel()->fixEdit();
    QCOMPARE(edit->isVisibleTo(w.controlPanel()), fix.exists());
    QVERIFY(!edit->switchBox()->isChecked());  // every scenario starts from the failure it teaches
    QVERIFY(!w.controlPanel()->controls().fix);
    if (fix.exists()) {
        QVERIFY(edit->switchBox()->text().contains(QString::fromStdString(fix.name)));
        QCOMPARE(edit->switchBox()->text().contains(QLatin1String("(at Start)")), fix.atStart);
    }
    QVERIFY(w.challengeBox()->isVisibleTo(&w));
    QCOMPARE(label(w, "challengeGoal"), QString::fromStdString(findChallenge(id.toStdString())->goal));
}

void TestChallengeWindow::fixReachesTheRunAndSolvesTheChallenge()
{
    MainWindow w(newLiveSession);
    w.show();
    w.selectScenario(QStringLiteral("zero-division"));
    QVERIFY(runToEnd(w));  // the defaults: 0 / 0, not solved
    QVERIFY(!w.challengeBox()->solved());
    QVERIFY2(label(w, "challengeState").contains(QLatin1String("the last run ended short of the goal")),
             qPrintable(label(w, "challengeState")));

    std::vector<Controls> edited;
    connect(w.controlPanel(), &ControlPanel::controlsEdited, this, [&edited](const Controls &c) { edited.push_back(c); });
    w.controlPanel()->fixEdit()->switchBox()->setChecked(true);
    QCOMPARE(int(edited.size()), 1);
    QCOMPARE(edited[0].fix.value_or(-1), 1e-6);
    QVERIFY(runToEnd(w));
    QVERIFY(w.challengeBox()->solved());
    QVERIFY(label(w, "challengeState").contains(QLatin1String("Solved")));

    w.action(QStringLiteral("challenges"))->trigger();
    QTableWidget *table = w.challengesDialog()->table();
    QCOMPARE(table->rowCount(), int(challenges().size()));
    int solvedRows = 0;
    for (int row = 0; row < table->rowCount(); ++row) {
        const bool solved = table->item(row, 2)->text().contains(QLatin1String("solved"));
        solvedRows += solved ? 1 : 0;
        QCOMPARE(solved, table->item(row, 0)->text() == QLatin1String("zero-division"));
    }
    QCOMPARE(solvedRows, 1);

    // Another scenario, tried and missed; back to zero-division, still solved in this session.
    w.selectScenario(QStringLiteral("log-zero"));
    w.setSteps(5);
    QVERIFY(runToEnd(w));
    QVERIFY(!w.challengeBox()->solved());
    bool tried = false;
    for (int row = 0; row < table->rowCount(); ++row)
        if (table->item(row, 0)->text() == QLatin1String("log-zero"))
            tried = table->item(row, 2)->text() == QLatin1String("tried");
    QVERIFY(tried);
    w.selectScenario(QStringLiteral("zero-division"));
    QVERIFY(w.challengeBox()->solved());
}

void TestChallengeWindow::hintsComeOneAtATime()
{
    MainWindow w(newLiveSession);
    w.show();
    w.selectScenario(QStringLiteral("exploding-deep"));
    const Challenge *c = findChallenge("exploding-deep");
    QPushButton *hint = w.challengeBox()->hintButton();
    QCOMPARE(w.challengeBox()->hintsShown(), 0);
    QVERIFY(label(w, "challengeHints").isEmpty());
    for (int i = 1; i <= int(c->hints.size()); ++i) {
        QVERIFY(hint->isEnabled());
        hint->click();
        QCOMPARE(w.challengeBox()->hintsShown(), i);
        QVERIFY(label(w, "challengeHints").contains(QString::fromStdString(c->hints[std::size_t(i - 1)])));
    }
    QVERIFY(!hint->isEnabled());
    w.selectScenario(QStringLiteral("nan-input"));  // a new scenario starts with its hints hidden
    QCOMPARE(w.challengeBox()->hintsShown(), 0);
}

QTEST_MAIN(TestChallengeWindow)
#include "tst_challenge_window.moc"
