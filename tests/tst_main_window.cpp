// The first window: a run streams into the plots and the origin shows; closing mid-run is clean.
#include "main_window.h"
#include "plot_series.h"

#include <QSignalSpy>
#include <QtTest>

using namespace nanscope;

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void runFillsThePlotsAndShowsTheOrigin();
    void manyRecordsFewDeliveries();
    void closingMidRunStopsTheWorker();
};

void TestMainWindow::runFillsThePlotsAndShowsTheOrigin()
{
    MainWindow w;
    w.show();
    w.selectScenario(QStringLiteral("large-lr-mse"));
    w.setSteps(20);
    QSignalSpy ended(&w, &MainWindow::runEnded);
    QVERIFY(w.startRun());
    QVERIFY(ended.wait(60000));
    QCOMPARE(w.recordsShown(), 20);
    // Steps 0..7 are finite; from step 8 on the loss is non-finite and marked, never dropped.
    QCOMPARE(finitePointCount(w.lossPlot()), 8);
    QCOMPARE(nonFiniteMarkerCount(w.lossPlot()), 12);
    QVERIFY2(w.originText().contains(QLatin1String("step 8")), qPrintable(w.originText()));
    QVERIFY(w.originText().contains(QLatin1String("fc2")));
}

void TestMainWindow::manyRecordsFewDeliveries()
{
    MainWindow w;
    w.selectScenario(QStringLiteral("large-lr-ce"));
    w.setSteps(2000);
    QSignalSpy ended(&w, &MainWindow::runEnded);
    QVERIFY(w.startRun());
    QVERIFY(ended.wait(120000));
    QCOMPARE(w.recordsShown(), 2000);
    // Records are coalesced by a 33 ms timer: far fewer deliveries than records.
    QVERIFY2(w.controller().deliveries() < 1000, qPrintable(QString::number(w.controller().deliveries())));
}

void TestMainWindow::closingMidRunStopsTheWorker()
{
    auto *w = new MainWindow;
    w->selectScenario(QStringLiteral("safe-training"));
    w->setSteps(1000000);
    QVERIFY(w->startRun());
    QTest::qWait(200);
    QElapsedTimer t;
    t.start();
    delete w;  // the destructor stops and joins the worker
    QVERIFY(t.elapsed() < 3000);
}

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    TestMainWindow t;
    return QTest::qExec(&t, argc, argv);
}
#include "tst_main_window.moc"
