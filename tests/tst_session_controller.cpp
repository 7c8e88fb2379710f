// The window's only way to a run: SessionController delivers a source's records and events in
// batches on a timer, however fast they arrive, and drops those of a run already replaced.
#include "nanscope/pushed_run_source.h"
#include "window/session_controller.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QtTest>

using namespace nanscope;

class TestSessionController : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void controllerCoalescesAndDropsStaleRuns();
};

void TestSessionController::controllerCoalescesAndDropsStaleRuns()
{
    auto source = std::make_unique<PushedRunSource>();
    PushedRunSource &feed = *source;
    SessionController controller(std::move(source));
    QCOMPARE(controller.capabilities().steer, false);
    int received = 0, stale = 0, events = 0, staleEvents = 0;
    QSignalSpy batches(&controller, &SessionController::recordsArrived);
    connect(&controller, &SessionController::recordsArrived, this, [&](const QVector<StepRecordPtr> &records) {
        for (const StepRecordPtr &r : records)
            (r->run == 3 ? received : stale) += 1;
    });
    connect(&controller, &SessionController::eventsArrived, this, [&](const QVector<Event> &list) {
        for (const Event &e : list)
            (e.run == 3 ? events : staleEvents) += 1;
    });
    feed.beginRun(3, {{0, "", "Net", -1}});
    QElapsedTimer clock;
    clock.start();
    for (int step = 0; step < 20000; ++step) {
        auto r = std::make_shared<StepRecord>();
        r->run = step % 10 == 0 ? 2 : 3;  // every tenth belongs to a replaced run
        r->step = step;
        feed.pushStep(r);
        if (step % 1000 == 0) {
            Event e{EventKind::Info, step, -1, "an event"};
            e.run = step % 2000 == 0 ? 2 : 3;  // half of them from the replaced run
            feed.pushEvent(e);
        }
    }
    QTRY_COMPARE(received, 18000);
    QCOMPARE(stale, 0);
    QTRY_COMPARE(events, 10);
    QCOMPARE(staleEvents, 0);
    // One batch per 33 ms tick at most, however many records arrived.
    QVERIFY2(batches.count() <= clock.elapsed() / 33 + 2, qPrintable(QString::number(batches.count())));
}

QTEST_GUILESS_MAIN(TestSessionController)
#include "tst_session_controller.moc"
