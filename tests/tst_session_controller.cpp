// The window's only way to a run: SessionController delivers a source's records and events in
// batches on a timer, however fast they arrive, and drops those of a run already replaced; a
// flood it cannot deliver in time it folds into chunks, losing no step and no non-finite cell.
#include "live_session.h"
#include "nanscope/pushed_run_source.h"
#include "nanscope/synthetic_records.h"
#include "window/session_controller.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QtTest>

using namespace nanscope;

class TestSessionController : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void controllerCoalescesAndDropsStaleRuns();
    void aFloodIsFoldedIntoChunks();
};

void TestSessionController::controllerCoalescesAndDropsStaleRuns()
{
    auto source = std::make_unique<PushedRunSource>();
    PushedRunSource &feed = *source;
    SessionController controller(newLiveSession, std::move(source));
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

// 12,000 records of 600 layers arrive while the GUI thread is busy: the queue never holds more
// than 333 of them (200,000 layer-steps, about 60 MB), the rest arrive folded, and every step and NaN is counted.
void TestSessionController::aFloodIsFoldedIntoChunks()
{
    auto source = std::make_unique<PushedRunSource>();
    PushedRunSource &feed = *source;
    SessionController controller(newLiveSession, std::move(source));
    const int layers = 600, steps = 12000;
    int records = 0, largestBatch = 0, chunkSteps = 0, nonFinite = 0, lastStep = -1;
    std::int64_t nanInLayer5 = 0;
    bool inOrder = true;
    connect(&controller, &SessionController::recordsArrived, this, [&](const QVector<StepRecordPtr> &batch) {
        records += batch.size();
        largestBatch = std::max(largestBatch, int(batch.size()));
        for (const StepRecordPtr &r : batch) {
            inOrder = inOrder && r->step > lastStep;
            lastStep = r->step;
            nonFinite += r->nonFinite();
            nanInLayer5 += r->layers[5].forward.nan;
        }
    });
    connect(&controller, &SessionController::chunksArrived, this, [&](const QVector<StepChunkPtr> &batch) {
        for (const StepChunkPtr &c : batch) {
            inOrder = inOrder && c->firstStep > lastStep;
            lastStep = c->lastStep;
            chunkSteps += c->tally.steps;
            nonFinite += c->tally.nonFiniteSteps;
            nanInLayer5 += c->layers[5].cells[0].nan;  // forward: the worst step's count
        }
    });
    feed.beginRun(1, syntheticLayers(layers));
    for (int step = 0; step < steps; ++step)  // the GUI thread is busy here: nothing is delivered
        feed.pushStep(syntheticStepRecord(1, step, layers, step == 3000 || step == 7777));
    QTRY_COMPARE(records + chunkSteps, steps);
    QVERIFY(inOrder);
    QVERIFY2(largestBatch <= 200000 / layers, qPrintable(QString::number(largestBatch)));
    QVERIFY2(chunkSteps >= steps - 200000 / layers, qPrintable(QString::number(chunkSteps)));
    QCOMPARE(int(controller.foldedRecords()), chunkSteps);
    QCOMPARE(nonFinite, 2);
    QCOMPARE(nanInLayer5, std::int64_t(2 * 64 * 3));
}

QTEST_GUILESS_MAIN(TestSessionController)
#include "tst_session_controller.moc"
