// Steering a live run from the window: a control changed while paused reaches the session and is
// marked on the plots; each decision the origin panel offers on a paused step does what it says.
#include "live_session.h"
#include "widgets/control_panel.h"
#include "widgets/learning_rate_edit.h"
#include "widgets/origin_panel.h"
#include "widgets/plot_panel.h"
#include "window/main_window.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest>

using namespace nanscope;

class TestWindowDecisions : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }  // QSettings go to a test location
    void aControlChangeReachesTheSessionAndIsMarked();
    void pauseOnNonFiniteOffersTheDecisions_data();
    void pauseOnNonFiniteOffersTheDecisions();
};

void TestWindowDecisions::aControlChangeReachesTheSessionAndIsMarked()
{
    MainWindow w(newLiveSession);
    w.selectScenario(QStringLiteral("large-lr-mse"));
    w.setSteps(1000000);
    QVERIFY(w.startRun());
    QTRY_VERIFY(w.recordsShown() > 0);
    w.controller().pause();
    QTRY_COMPARE(w.controller().state(), SessionState::Paused);
    QTRY_VERIFY(w.controller().settled());  // the step in flight when pause() came is delivered
    w.controlPanel()->learningRateEdit()->spinBox()->setValue(0.01);
    QCOMPARE(w.controller().controls().learningRate, 0.01);
    const int before = w.recordsShown();
    w.controller().stepOnce(2);
    QTRY_COMPARE(w.recordsShown(), before + 2);
    QTRY_COMPARE(w.plots()->controlMarkCount(), 1);
    QCOMPARE(w.store().controlMarks().front().text, std::string("lr 0.01"));
    QCOMPARE(w.store().series(Series::LearningRate).buckets().back().max, 0.01);
    w.controller().stop();
}

// Each decision the origin panel offers, clicked as the user clicks it on nan-input's first bad
// batch, with the pause then unticked; the summary, the store and the window agree on what it did.
void TestWindowDecisions::pauseOnNonFiniteOffersTheDecisions_data()
{
    QTest::addColumn<QString>("button");
    QTest::newRow("skip") << QStringLiteral("S&kip batch");
    QTest::newRow("continue") << QStringLiteral("&Continue");
    QTest::newRow("retry, quarantining") << QStringLiteral("Re&try step");
    QTest::newRow("roll back") << QStringLiteral("Roll bac&k");
}

void TestWindowDecisions::pauseOnNonFiniteOffersTheDecisions()
{
    QFETCH(QString, button);
    MainWindow w(newLiveSession);
    w.selectScenario(QStringLiteral("nan-input"));
    w.setSteps(6);
    QCheckBox *pause = nullptr, *quarantine = nullptr;
    for (QCheckBox *box : w.controlPanel()->findChildren<QCheckBox *>()) {
        if (box->text().startsWith(QLatin1String("Pause on non-finite")))
            pause = box;
        if (box->text().startsWith(QLatin1String("Quarantine")))
            quarantine = box;
    }
    QVERIFY(pause && quarantine);
    pause->setChecked(true);  // as the user ticks it
    QVERIFY(w.controlPanel()->controls().pauseOnNonFinite);
    QSignalSpy ended(&w, &MainWindow::runEnded);
    QVERIFY(w.startRun());
    QTRY_VERIFY(w.originPanel()->awaitingDecision());
    QVERIFY(w.originText().contains(QLatin1String("input")));
    QVERIFY(w.originText().contains(QLatin1String("untouched")));
    QCOMPARE(w.store().firstOrigin().valid(), false);  // the paused step's record comes once it is decided
    const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("update of step (\\d+)")).match(w.originText());
    QVERIFY(m.hasMatch());
    const int pausedStep = m.captured(1).toInt();
    pause->setChecked(false);  // no pause from here on: reaches the session as a control change
    if (button.startsWith(QLatin1String("Re&try")))
        quarantine->setChecked(true);  // the same batch again, without its bad samples
    QPushButton *decision = nullptr;
    for (QPushButton *b : w.originPanel()->findChildren<QPushButton *>())
        if (b->text() == button)
            decision = b;
    QVERIFY(decision && decision->isEnabled());
    QTest::mouseClick(decision, Qt::LeftButton);
    QVERIFY(!w.originPanel()->awaitingDecision());
    QVERIFY(!decision->isEnabled());
    QVERIFY(ended.wait(60000));
    const RunSummary &s = w.controller().lastSummary();
    QVERIFY2(s.error.empty(), s.error.c_str());
    const std::vector<SeriesBucket> &skipped = w.store().skippedSteps().buckets();
    if (button == QLatin1String("S&kip batch")) {
        // The one skipped step is the paused one, and the window, the summary and the store agree.
        QCOMPARE(s.stepsRun, 6);
        QCOMPARE(s.firstNonFiniteStep, pausedStep);
        QCOMPARE(s.skippedSteps, 1);
        QCOMPARE(int(skipped.size()), 1);
        QCOMPARE(skipped.front().firstStep, pausedStep);
        QCOMPARE(w.store().firstOrigin().step, pausedStep);
    } else if (button == QLatin1String("&Continue")) {
        // The NaN update went in: every step from the paused one on is non-finite.
        QCOMPARE(s.stepsRun, 6);
        QCOMPARE(s.firstNonFiniteStep, pausedStep);
        QCOMPARE(s.skippedSteps, 0);
        QCOMPARE(s.nonFiniteSteps, 6 - pausedStep);
        QVERIFY(!s.finalStateFinite);
        QCOMPARE(w.store().firstOrigin().step, pausedStep);
    } else if (button == QLatin1String("Re&try step")) {
        // The failed attempt was never published; the retried batch and every later one lost
        // their bad samples, so no step of the run is non-finite.
        QCOMPARE(s.stepsRun, 6);
        QCOMPARE(s.nonFiniteSteps, 0);
        QCOMPARE(s.firstNonFiniteStep, -1);
        QVERIFY(!s.quarantinedSamples.empty());
        QVERIFY(s.finalStateFinite);
        QVERIFY(!w.store().firstOrigin().valid());
    } else {
        // The paused step is skipped, then the last checked-finite state comes back.
        QCOMPARE(s.rollbacks, 1);
        QVERIFY(s.skippedSteps >= 1);
        QVERIFY(!skipped.empty());
        QCOMPARE(skipped.front().firstStep, pausedStep);
        QCOMPARE(s.firstNonFiniteStep, pausedStep);
    }
}

QTEST_MAIN(TestWindowDecisions)
#include "tst_window_decisions.moc"
