// Long runs in the window. Zooming into a stretch (main_window_zoom.cpp): the window opens a run
// file from its chunks, the user zooms the plots, and the stretch is read back from the file at
// the finest detail that fits: single steps where the file kept them (the map says why on hover),
// their chunk's values for thinned steps, chunks for wider stretches; following the run again
// drops it. The keep policy of the files the window records (`nanscope --keep`).
#include "live_session.h"
#include "synthetic_run.h"
#include "window_runs.h"

#include "widgets/nan_map_view.h"
#include "widgets/plot_panel.h"
#include "window/main_window.h"
#include "window/stretch_loader.h"

#include "nanscope/run_file.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QStandardPaths>
#include <QtTest>

#include <qcustomplot.h>

using namespace nanscope;
using namespace nanscope::testing;

namespace {

constexpr int kNanStep = LongRun::kNanStep;

// Points of the loss plot's line at steps first..last.
int pointsBetween(const QCustomPlot *plot, int first, int last)
{
    int n = 0;
    const QCPGraph *line = plot->graph(0);
    for (auto it = line->data()->findBegin(first, false); it != line->data()->constEnd() && it->key <= last; ++it)
        n += it->key >= first;
    return n;
}

}  // namespace

class TestLongRunWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void zoomReadsTheStretchFromTheFile();
    void aLiveRunZoomsIntoItsOwnFile();
    void recordedRunsKeepWhatTheWindowChose_data();
    void recordedRunsKeepWhatTheWindowChose();

private:
    QTemporaryDir dir_;
    QString path_;
};

void TestLongRunWindow::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);  // settings and the runs folder of the test's own
    path_ = dir_.filePath(QStringLiteral("long.nsrun"));
    LongRun::record(path_);
}

void TestLongRunWindow::zoomReadsTheStretchFromTheFile()
{
    MainWindow w(newLiveSession);
    w.resize(1200, 800);
    w.setOpenChunkedAbove(0);
    QVERIFY(runToEnd(w, [&] { QVERIFY(w.openRun(path_, false)); }));
    NanMapView &map = *w.nanMap();
    PlotPanel &plots = *w.plots();
    // Opened from its chunks: a column and a bucket a chunk.
    QCOMPARE(map.columnCount(), 94);
    QVERIFY(pointsBetween(plots.lossPlot(), 2990, 3010) <= 2);  // the chunk from 3008 on: its min and max
    QSignalSpy loaded(w.stretchLoader(), &StretchLoader::loaded);

    plots.showSteps(2990, 3010);
    QVERIFY(loaded.wait(20000));
    QCOMPARE(map.columnCount(), 21);
    QCOMPARE(w.stretchLoader()->level(), StretchLevel::Steps);
    QVERIFY(pointsBetween(plots.lossPlot(), 2990, 3010) >= 20);  // a point a step (NaN steps are markers)
    QVERIFY(map.shownValue(4, kNanStep) > 0);                 // the NaN cell
    QCOMPARE(map.shownValue(1, kNanStep), 0.0);
    QVERIFY(map.originOutlined());
    const int row = rowOfLayer(map.rows(), 2);
    const auto column = [&](int step) {
        for (int c = 0; c < map.columnCount(); ++c)
            if (map.describeCell(row, c).contains(QStringLiteral("step %1\n").arg(step)))
                return c;
        return -1;
    };
    QVERIFY2(map.describeCell(row, column(2995)).contains(QLatin1String("leads up to a non-finite step")),
             qPrintable(map.describeCell(row, column(2995))));
    QVERIFY2(map.describeCell(row, column(3001)).contains(QLatin1String("kept no layer detail")),
             qPrintable(map.describeCell(row, column(3001))));
    QVERIFY(map.describeCell(row, column(3008)).contains(QLatin1String("regular sample")));

    // Wider: chunks, said on hover.
    plots.showSteps(1000, 5000);
    QVERIFY(loaded.wait(20000));
    QCOMPARE(w.stretchLoader()->level(), StretchLevel::Chunks);
    QCOMPARE(map.columnCount(), 5056 / 64 - 960 / 64);
    QVERIFY(map.describeCell(row, 0).contains(QLatin1String("run file's chunks")));

    // Following the run again shows the whole run's store.
    plots.fitRun();
    QTRY_COMPARE_WITH_TIMEOUT(map.columnCount(), 94, 5000);
    QVERIFY(!w.stretchLoader()->store());
    QVERIFY(pointsBetween(plots.lossPlot(), 2990, 3010) <= 2);
}

// The window trains and records at once: a zoom while it trains reads the steps shown from the file
// being written (flushed first), and the run goes on to its end.
void TestLongRunWindow::aLiveRunZoomsIntoItsOwnFile()
{
    MainWindow w(newLiveSession);
    w.selectScenario(QStringLiteral("safe-training"));
    w.setSteps(2000);
    QSignalSpy ended(&w, &MainWindow::runEnded);
    QSignalSpy loaded(w.stretchLoader(), &StretchLoader::loaded);
    QVERIFY(w.startRun());
    QTRY_VERIFY_WITH_TIMEOUT(w.recordsShown() >= 60, 60000);
    w.plots()->showSteps(10, 50);
    QVERIFY(loaded.wait(20000));
    QCOMPARE(w.nanMap()->columnCount(), 41);
    QCOMPARE(w.stretchLoader()->firstStep(), 10);
    QVERIFY(ended.wait(120000));
    QCOMPARE(w.recordsShown(), 2000);
    QCOMPARE(w.nanMap()->columnCount(), 41);  // still zoomed in
    w.plots()->fitRun();
    QTRY_VERIFY_WITH_TIMEOUT(!w.stretchLoader()->store(), 5000);
}

void TestLongRunWindow::recordedRunsKeepWhatTheWindowChose_data()
{
    QTest::addColumn<QString>("keep");
    QTest::addColumn<bool>("all");
    QTest::newRow("auto, the default") << QString() << false;
    QTest::newRow("all") << QStringLiteral("all") << true;
}

void TestLongRunWindow::recordedRunsKeepWhatTheWindowChose()
{
    QFETCH(QString, keep);
    QFETCH(bool, all);
    MainWindow w(newLiveSession);
    if (!keep.isEmpty())
        w.setRecordingKeep(*parseKeepPolicy(keep.toStdString()));
    w.selectScenario(QStringLiteral("large-lr-mse"));
    w.setSteps(5);
    QVERIFY(runToEnd(w, [&] { QVERIFY(w.startRun()); }));
    const RunFileInfo info = RunFile(w.runFile().toStdString()).info();
    QCOMPARE(info.keep.keepAll, all);
    QCOMPARE(QString::fromStdString(keepPolicyName(info.keep)), keep.isEmpty() ? QStringLiteral("auto") : keep);
}

QTEST_MAIN(TestLongRunWindow)
#include "tst_long_run_window.moc"
