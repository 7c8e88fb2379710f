// File › Compare with…: a second run read beside the window's own, drawn dashed over its plots,
// with the settings that differ and where the runs part in the Comparison dock; closed again; a
// file that cannot be read; a live run compared again once it ends.
#include "live_session.h"
#include "run/map_rows.h"
#include "widgets/comparison_panel.h"
#include "widgets/nan_map_view.h"
#include "widgets/plot_panel.h"
#include "window/main_window.h"
#include "window/run_comparison.h"

#include "run_file_helpers.h"
#include "window_runs.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <qcustomplot.h>

using namespace nanscope;
using nanscope::testing::recordRun;
using nanscope::testing::runToEnd;

class TestComparisonWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void theSecondRunIsDrawnDashedWithWhatDiffers();
    void aFileThatCannotBeReadSaysWhy();
    void aLiveRunIsComparedAgainWhenItEnds();

private:
    QString path(const char *name) const { return dir_.filePath(QString::fromUtf8(name)); }
    QTemporaryDir dir_;
};

namespace {

RunConfig mseAt(double lr)
{
    RunConfig c = nanscope::testing::scenario("large-lr-mse", 8);
    c.seed = 3;
    Controls controls = defaultControls(c);
    controls.learningRate = lr;
    c.controls = controls;
    return c;
}

QCPGraph *graphNamed(QCustomPlot *plot, const QString &name)
{
    for (int i = 0; i < plot->graphCount(); ++i)
        if (plot->graph(i)->name() == name)
            return plot->graph(i);
    return nullptr;
}

bool waitShown(MainWindow &w)
{
    QSignalSpy shown(w.comparison(), &RunComparison::shownChanged);
    return shown.wait(60000);
}

}  // namespace

void TestComparisonWindow::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    recordRun(mseAt(1.0), path("lr1.nsrun").toStdString());   // NaN from step 6
    recordRun(mseAt(0.5), path("lr05.nsrun").toStdString());  // finite for these 8 steps
}

void TestComparisonWindow::theSecondRunIsDrawnDashedWithWhatDiffers()
{
    MainWindow w(newLiveSession);
    QVERIFY(runToEnd(w, [&] { w.openRun(path("lr1.nsrun"), false); }));
    QVERIFY(!w.action(QStringLiteral("closeComparison"))->isEnabled());
    w.compareWith(path("lr05.nsrun"));
    QVERIFY(waitShown(w));

    QCPGraph *dashed = graphNamed(w.plots()->lossPlot(), QStringLiteral("lr05"));
    QVERIFY(dashed);
    QCOMPARE(dashed->pen().style(), Qt::DashLine);
    QCOMPARE(dashed->data()->size(), 8);  // each of the compared run's 8 finite losses
    QCOMPARE(dashed->data()->at(7)->key, 7.0);
    QVERIFY(graphNamed(w.plots()->gradPlot(), QStringLiteral("lr05")));
    QVERIFY(graphNamed(w.plots()->lrPlot(), QStringLiteral("lr05")));
    QVERIFY(w.plots()->lossPlot()->legend->visible());

    QTableWidget *settings = w.comparisonPanel()->settingsTable();
    QCOMPARE(settings->rowCount(), 1);  // only the learning rate differs
    QCOMPARE(settings->item(0, 0)->text(), QStringLiteral("controls.learning_rate"));
    QCOMPARE(settings->item(0, 1)->text(), QStringLiteral("1.0"));
    QCOMPARE(settings->item(0, 2)->text(), QStringLiteral("0.5"));
    const QString summary = w.comparisonPanel()->summaryText();
    QVERIFY2(summary.contains(QStringLiteral("step 1</a>, in the forward of layer")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("lr1: non-finite first at step 6, the runs apart since step 1")),
             qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("lr05: never non-finite")), qPrintable(summary));
    QVERIFY(w.findChild<QDockWidget *>(QStringLiteral("comparison"))->isVisibleTo(&w));

    // The map's difference: identical at step 0 (the bottom of the scale), apart from step 1, red
    // where one run is NaN and the other finite, the parting cell outlined.
    auto *measures = w.nanMap()->findChild<QComboBox *>(QStringLiteral("mapMeasure"));
    QVERIFY(measures->findData(int(MapMeasure::Difference)) >= 0);
    w.nanMap()->setMeasure(MapMeasure::Difference);
    QCOMPARE(w.nanMap()->measure(), MapMeasure::Difference);
    const int fc1 = 1, fc2 = 3;  // large-lr-mse: (model), fc1, relu, fc2
    QCOMPARE(w.nanMap()->shownValue(fc1, 0), kZeroValue);
    const double apart = w.nanMap()->shownValue(fc1, 1);
    QVERIFY2(apart > -8.0 && apart <= 0.0, qPrintable(QString::number(apart)));
    QCOMPARE(w.nanMap()->shownValue(fc2, 7), kNonFiniteValue);  // NaN at lr 1, finite at lr 0.5
    int layer = -1, step = -1;
    QVERIFY(w.nanMap()->partingOutlined(&layer, &step));
    QCOMPARE(layer, fc1);
    QCOMPARE(step, 1);
    const int row = rowOfLayer(w.nanMap()->rows(), fc1);
    const QString hover = w.nanMap()->describeCell(row, w.store().map().columnOfStep(1));
    QVERIFY2(hover.contains(QStringLiteral("this run: norm")) && hover.contains(QStringLiteral("compared run: norm")),
             qPrintable(hover));

    QVERIFY(w.action(QStringLiteral("closeComparison"))->isEnabled());
    w.action(QStringLiteral("closeComparison"))->trigger();
    QVERIFY(!graphNamed(w.plots()->lossPlot(), QStringLiteral("lr05")));
    QVERIFY(!w.plots()->comparing());
    QVERIFY(!w.findChild<QDockWidget *>(QStringLiteral("comparison"))->isVisibleTo(&w));
    QVERIFY(!w.action(QStringLiteral("closeComparison"))->isEnabled());
    QCOMPARE(w.nanMap()->measure(), MapMeasure::NonFinite);  // no difference without a comparison
    QCOMPARE(measures->findData(int(MapMeasure::Difference)), -1);
}

void TestComparisonWindow::aFileThatCannotBeReadSaysWhy()
{
    MainWindow w(newLiveSession);
    QVERIFY(runToEnd(w, [&] { w.openRun(path("lr1.nsrun"), false); }));
    QSignalSpy failed(w.comparison(), &RunComparison::failed);
    w.compareWith(path("missing.nsrun"));
    QVERIFY(failed.wait(30000));
    QVERIFY2(failed.at(0).at(0).toString().contains(QStringLiteral("missing.nsrun")),
             qPrintable(failed.at(0).at(0).toString()));
    QVERIFY(!w.comparison()->shown());
    QVERIFY(!w.plots()->comparing());
}

void TestComparisonWindow::aLiveRunIsComparedAgainWhenItEnds()
{
    MainWindow w(newLiveSession);
    w.selectScenario(QStringLiteral("large-lr-mse"));
    w.setSteps(8);
    QSignalSpy ended(&w, &MainWindow::runEnded);
    QSignalSpy shown(w.comparison(), &RunComparison::shownChanged);
    QVERIFY(w.startRun());
    w.compareWith(path("lr05.nsrun"));  // while the run trains
    QVERIFY(ended.wait(120000));
    // Drawn once read, and compared again with the whole run once it ended.
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 2, 60000);
    QVERIFY(w.plots()->comparing());
    const QString summary = w.comparisonPanel()->summaryText();
    QVERIFY2(summary.contains(QStringLiteral("(8 steps) against <b>lr05</b> (8 steps), 8 steps compared")),
             qPrintable(summary));
}

QTEST_MAIN(TestComparisonWindow)
#include "tst_comparison_window.moc"
