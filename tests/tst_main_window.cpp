// The window as a user drives it: a run streams into the plots, the NaN map and the layer tree;
// the origin shows; exports write files; closing mid-run is clean. Steering a live run (controls,
// the decisions on a paused step): tst_window_decisions.
#include "live_session.h"
#include "nanscope/pushed_run_source.h"
#include "widgets/control_panel.h"
#include "widgets/lesson_pane.h"
#include "nanscope/scenario.h"
#include "models/event_log_model.h"
#include "widgets/input_shape_dialog.h"
#include "models/layer_tree_model.h"
#include "window/main_window.h"
#include "widgets/nan_map_view.h"
#include "widgets/origin_panel.h"
#include "widgets/plot_panel.h"
#include "widgets/plot_series.h"
#include "watchdog.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeView>

#include <cmath>
#include <QCheckBox>
#include <QLineEdit>
#include <QPushButton>
#include <QtTest>

#include <qcustomplot.h>

using namespace nanscope;

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void treeStatusesTellTheStory();
    void valueAxesTurnLogarithmicWhenASeriesSpansDecades();
    void runFillsThePlotsTheMapAndTheTree();
    void manyRecordsFewDeliveries();
    void clickingAMapCellSelectsLayerAndStep();
    void exportsWriteFiles();
    void presentationModeEnlargesTheFont();
    void everyScenarioHasItsLesson();
    void lossScalingShowsItsPlotAndSkippedSteps();
    void mapRowsFollowTheTree();
    void resetMidRunClearsEverything();
    void closingMidRunStopsTheWorker();
};

namespace {

bool runToEnd(MainWindow &w, const QString &scenario, int steps, int timeoutMs = 60000)
{
    w.selectScenario(scenario);
    w.setSteps(steps);
    QSignalSpy ended(&w, &MainWindow::runEnded);
    return w.startRun() && ended.wait(timeoutMs);
}

}  // namespace

// large-lr-mse's loss grows by more than three decades before it turns NaN: the axes turn
// logarithmic by themselves; safe-training's stay linear; a user's choice wins over both.
void TestMainWindow::valueAxesTurnLogarithmicWhenASeriesSpansDecades()
{
    auto isLog = [](const MainWindow &w) { return w.lossPlot()->yAxis->scaleType() == QCPAxis::stLogarithmic; };
    {
        MainWindow w(newLiveSession);
        w.show();
        QVERIFY(runToEnd(w, QStringLiteral("large-lr-mse"), 20));
        QVERIFY(isLog(w));
        // The overflow forecast of step 7 is in the log and marked on the map.
        QVERIFY(w.nanMap()->warningMarkCount() >= 1);
        QVERIFY(w.plots()->gradPlot()->yAxis->scaleType() == QCPAxis::stLogarithmic);
    }
    {
        MainWindow w(newLiveSession);
        w.show();
        QVERIFY(runToEnd(w, QStringLiteral("safe-training"), 20));
        QVERIFY(!isLog(w));
    }
    MainWindow w(newLiveSession);
    w.show();
    auto *box = w.plots()->findChild<QCheckBox *>();
    QVERIFY(box);
    QTest::mouseClick(box, Qt::LeftButton);  // log, then linear again: the user's choice
    QTest::mouseClick(box, Qt::LeftButton);
    QVERIFY(!box->isChecked());
    QVERIFY(runToEnd(w, QStringLiteral("large-lr-mse"), 20));
    QVERIFY(!isLog(w));
}

// exploding-deep: fc28 makes the first Inf at step 0; the update then makes the weights of every
// layer non-finite. The tree keeps fc28 as the birthplace and says what happened to fc1.
void TestMainWindow::treeStatusesTellTheStory()
{
    MainWindow w(newLiveSession);
    w.show();
    QVERIFY(runToEnd(w, QStringLiteral("exploding-deep"), 4));
    auto statusOf = [&w](const QString &name) {
        const QModelIndexList hit = w.layerModel()->match(w.layerModel()->index(0, 0), Qt::DisplayRole, name, 1,
                                                          Qt::MatchRecursive | Qt::MatchExactly);
        return hit.isEmpty() ? QString()
                             : w.layerModel()
                                   ->indexForLayer(w.layerModel()->layerAt(hit.first()), LayerTreeModel::StatusColumn)
                                   .data()
                                   .toString();
    };
    QCOMPARE(statusOf(QStringLiteral("fc28")), QStringLiteral("born here at step 0"));
    const QString fc1 = statusOf(QStringLiteral("fc1"));
    QVERIFY2(fc1.startsWith(QLatin1String("weights non-finite from step 1")), qPrintable(fc1));
    QVERIFY2(w.originText().contains(QLatin1String("fc28")), qPrintable(w.originText()));
}

void TestMainWindow::runFillsThePlotsTheMapAndTheTree()
{
    MainWindow w(newLiveSession);
    QAbstractItemModelTester treeTester(w.layerModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester proxyTester(w.layerView()->model(),
                                         QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester logTester(w.eventModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    w.show();
    QVERIFY(runToEnd(w, QStringLiteral("large-lr-mse"), 20));
    QCOMPARE(w.recordsShown(), 20);
    // Steps 0..7 are finite; from step 8 on the loss is non-finite and marked, never dropped.
    QCOMPARE(finitePointCount(w.lossPlot()), 8);
    QCOMPARE(nonFiniteMarkerCount(w.lossPlot()), 12);
    QCOMPARE(finitePointCount(w.plots()->lrPlot()), 20);
    QVERIFY2(w.originText().contains(QLatin1String("Step 8")), qPrintable(w.originText()));
    QVERIFY(w.originText().contains(QLatin1String("fc2")));
    QVERIFY(w.originText().contains(QLatin1String("aten::addmm")));

    // The map: one column a step, one row a layer; fc2 at step 8 is outlined and coloured.
    const int fc2 = w.layerModel()->layerAt(
        w.layerModel()
            ->match(w.layerModel()->index(0, 0), Qt::DisplayRole, QStringLiteral("fc2"), 1, Qt::MatchRecursive)
            .value(0));
    QVERIFY(fc2 > 0);
    QCOMPARE(w.nanMap()->columnCount(), 20);
    QCOMPARE(w.nanMap()->rowCount(), int(w.controller().layers().size()));
    int layer = -1, step = -1;
    QVERIFY(w.nanMap()->originOutlined(&layer, &step));
    QCOMPARE(layer, fc2);
    QCOMPARE(step, 8);
    QVERIFY(w.nanMap()->shownValue(fc2, 8) > 0.2);
    QCOMPARE(w.nanMap()->shownValue(fc2, 7), 0.0);

    // The tree names fc2 as the producer, with its first non-finite step.
    const QModelIndex status = w.layerModel()->indexForLayer(fc2, LayerTreeModel::StatusColumn);
    QCOMPARE(status.data().toString(), QStringLiteral("born here at step 8"));
    QCOMPARE(w.layerModel()->indexForLayer(fc2, LayerTreeModel::FirstNonFiniteColumn).data().toInt(), 8);
    QVERIFY(w.eventModel()->rowCount() >= 2);  // the run's start and its first non-finite step
    QVERIFY(w.statusText().contains(QLatin1String("step 19")));
}

void TestMainWindow::manyRecordsFewDeliveries()
{
    MainWindow w(newLiveSession);
    QVERIFY(runToEnd(w, QStringLiteral("large-lr-ce"), 2000, 120000));
    QCOMPARE(w.recordsShown(), 2000);
    // Records are coalesced by a 33 ms timer: far fewer deliveries than records.
    QVERIFY2(w.controller().deliveries() < 1000, qPrintable(QString::number(w.controller().deliveries())));
}

void TestMainWindow::clickingAMapCellSelectsLayerAndStep()
{
    MainWindow w(newLiveSession);
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(runToEnd(w, QStringLiteral("large-lr-mse"), 20));
    QCustomPlot *plot = w.nanMap()->plot();
    plot->replot();
    const int layer = 2, column = 12;
    const QPoint at(int(plot->xAxis->coordToPixel(column)), int(plot->yAxis->coordToPixel(layer)));
    int hitLayer = -1, hitColumn = -1;
    QVERIFY(w.nanMap()->cellAt(at, &hitLayer, &hitColumn));
    QCOMPARE(hitLayer, layer);
    QCOMPARE(hitColumn, column);
    QTest::mouseClick(plot, Qt::LeftButton, {}, at);
    QCOMPARE(w.plots()->cursorStep(), 12);
    const QModelIndex current =
        qobject_cast<QSortFilterProxyModel *>(w.layerView()->model())->mapToSource(w.layerView()->currentIndex());
    QCOMPARE(w.layerModel()->layerAt(current), layer);
    QVERIFY(w.nanMap()->describeCell(layer, column).contains(QLatin1String("step 12")));
}

void TestMainWindow::exportsWriteFiles()
{
    MainWindow w(newLiveSession);
    w.show();
    QVERIFY(runToEnd(w, QStringLiteral("large-lr-mse"), 30));
    QTemporaryDir dir;
    QString error;
    QVERIFY2(w.exportCsv(dir.filePath(QStringLiteral("run.csv")), &error), qPrintable(error));
    QFile csv(dir.filePath(QStringLiteral("run.csv")));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QCOMPARE(csv.readAll().count('\n'), qsizetype(31));
    QVERIFY2(w.plots()->exportPng(dir.filePath(QStringLiteral("plots.png")), &error), qPrintable(error));
    QVERIFY2(w.plots()->exportPdf(dir.filePath(QStringLiteral("plots.pdf")), &error), qPrintable(error));
    QImage png(dir.filePath(QStringLiteral("plots.png")));
    QVERIFY(!png.isNull());
    QFile pdf(dir.filePath(QStringLiteral("plots.pdf")));
    QVERIFY(pdf.open(QIODevice::ReadOnly));
    QVERIFY(pdf.read(5) == "%PDF-");
    QVERIFY(!w.exportCsv(QStringLiteral("/nonexistent-dir/x.csv"), &error));
    QVERIFY(error.contains(QLatin1String("nonexistent-dir")));
}

void TestMainWindow::presentationModeEnlargesTheFont()
{
    MainWindow w(newLiveSession);
    const qreal normal = w.font().pointSizeF();
    w.action(QStringLiteral("presentation"))->trigger();
    QVERIFY(w.font().pointSizeF() > normal * 1.5);
    QVERIFY(w.action(QStringLiteral("presentation"))->isChecked());
    w.setPresentationMode(false);
    QCOMPARE(w.font().pointSizeF(), normal);
}

// A scenario is one registry entry, its lesson and its test: the registry and the lessons agree.
void TestMainWindow::everyScenarioHasItsLesson()
{
    LessonPane pane;
    QVERIFY(!pane.showLesson(QStringLiteral("no-such-scenario")));
    for (const ScenarioInfo &s : scenarios()) {
        QVERIFY2(pane.showLesson(QString::fromStdString(s.id)), s.id.c_str());
        QVERIFY2(pane.toPlainText().size() > 200, s.id.c_str());
    }
}

// Records pushed through a source, as a mixed-precision run would send them.
void TestMainWindow::lossScalingShowsItsPlotAndSkippedSteps()
{
    auto source = std::make_unique<PushedRunSource>();
    PushedRunSource &feed = *source;
    MainWindow w(newLiveSession, std::move(source));
    w.show();
    QVERIFY(w.plots()->lossScalePlot()->isHidden());
    const std::vector<Layer> layers{{0, "", "Net", -1}, {1, "fc", "Linear", 0}};
    feed.beginRun(7, layers);
    double scale = 65536;
    for (int step = 0; step < 6; ++step) {
        auto r = std::make_shared<StepRecord>();
        r->run = 7;
        r->step = step;
        r->loss = 1;
        r->lossScale = scale;
        r->skipped = step == 1 || step == 4;
        r->layers.resize(2);
        r->layers[1].forward.present = true;
        r->layers[1].forward.numel = 4;
        r->layers[1].forward.absMax = 30000.0;
        if (r->skipped)
            scale /= 2;
        feed.pushStep(r);
    }
    QTRY_COMPARE(w.recordsShown(), 6);
    QVERIFY(!w.plots()->lossScalePlot()->isHidden());
    QCOMPARE(w.plots()->skippedMarkerCount(), 2);
    w.nanMap()->setPrecision(Precision::FP16);
    w.nanMap()->setMeasure(MapMeasure::Headroom);
    QVERIFY(std::fabs(w.nanMap()->shownValue(1, 3) - std::log10(30000.0 / 65504.0)) < 1e-12);
    QVERIFY2(w.nanMap()->describeCell(1, 3).contains(QLatin1String("is 0.458 of fp16's largest")),
             qPrintable(w.nanMap()->describeCell(1, 3)));
    // The precision control says what fp16 means on the selected device, as the report does.
    QComboBox *precision = w.controlPanel()->precisionBox();
    QCOMPARE(w.controlPanel()->deviceBox()->currentData().toString(), QStringLiteral("cpu"));
    QCOMPARE(precision->itemText(precision->findData(int(Precision::FP16))), QStringLiteral("fp16 (emulated on CPU)"));
    QCOMPARE(precision->itemText(precision->findData(int(Precision::BF16))), QStringLiteral("bf16"));
}

// Opening and closing a module in the tree or on the map's label does it in both; the current
// layer is marked in both.
void TestMainWindow::mapRowsFollowTheTree()
{
    auto source = std::make_unique<PushedRunSource>();
    PushedRunSource &feed = *source;
    MainWindow w(newLiveSession, std::move(source));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const std::vector<Layer> layers{{0, "", "Net", -1},
                                    {1, "block", "Sequential", 0},
                                    {2, "block.fc1", "Linear", 1},
                                    {3, "block.fc2", "Linear", 1},
                                    {4, "head", "Linear", 0}};
    feed.beginRun(3, layers);
    for (int step = 0; step < 3; ++step) {
        auto r = std::make_shared<StepRecord>();
        r->run = 3;
        r->step = step;
        r->layers.resize(layers.size());
        for (LayerHealth &h : r->layers) {
            h.forward.present = true;
            h.forward.numel = 10;
        }
        feed.pushStep(r);
    }
    QTRY_COMPARE(w.recordsShown(), 3);
    NanMapView *map = w.nanMap();
    QCOMPARE(map->rowCount(), 5);
    const auto treeIndex = [&w](int layer) {
        return qobject_cast<QSortFilterProxyModel *>(w.layerView()->model())
            ->mapFromSource(w.layerModel()->indexForLayer(layer));
    };
    w.layerView()->collapse(treeIndex(1));
    QCOMPARE(map->rowCount(), 3);  // the model, block (its two layers in one row), head
    QVERIFY(!map->isExpanded(1));
    w.layerView()->expand(treeIndex(1));
    QCOMPARE(map->rowCount(), 5);
    // The map's label closes the module in the tree too.
    QCustomPlot *plot = map->plot();
    plot->replot();
    QTest::mouseClick(plot, Qt::LeftButton, {},
                      QPoint(plot->axisRect()->left() - 10, int(plot->yAxis->coordToPixel(1))));
    QCOMPARE(map->rowCount(), 3);
    QVERIFY(!w.layerView()->isExpanded(treeIndex(1)));
    QCOMPARE(w.layerView()->currentIndex(), treeIndex(1));
    QCOMPARE(map->selectedLayer(), 1);
    // Selecting in the tree marks the row on the map.
    w.layerView()->setCurrentIndex(treeIndex(4));
    QCOMPARE(map->selectedLayer(), 4);
    // Filtering opens every module in the tree, and on the map.
    for (QLineEdit *edit : w.findChildren<QLineEdit *>())
        if (edit->placeholderText().startsWith(QLatin1String("Filter layers")))
            edit->setText(QStringLiteral("fc"));
    QCOMPARE(map->rowCount(), 5);
}

void TestMainWindow::resetMidRunClearsEverything()
{
    MainWindow w(newLiveSession);
    w.selectScenario(QStringLiteral("large-lr-ce"));
    w.setSteps(1000000);
    QVERIFY(w.startRun());
    QTRY_VERIFY(w.recordsShown() > 10);
    Controls mine = w.controlPanel()->controls();
    mine.learningRate = 0.5;
    mine.pauseOnNonFinite = true;
    mine.recovery.quarantineSamples = true;
    w.controlPanel()->setControls(mine);
    w.action(QStringLiteral("reset"))->trigger();
    QVERIFY(w.controller().wait(5000));
    QTRY_VERIFY(w.controller().settled());  // anything the stopped run still delivered is dropped
    QCOMPARE(w.recordsShown(), 0);
    QCOMPARE(finitePointCount(w.lossPlot()), 0);
    QCOMPARE(w.layerModel()->rowCount(), 0);
    QCOMPARE(w.nanMap()->columnCount(), 0);
    // The run is gone, the user's controls stay; Scenario defaults brings the scenario's back.
    QCOMPARE(w.controlPanel()->controls().learningRate, 0.5);
    QVERIFY(w.controlPanel()->controls().pauseOnNonFinite);
    QVERIFY(w.controlPanel()->controls().recovery.quarantineSamples);
    auto *defaults = w.controlPanel()->findChild<QPushButton *>(QStringLiteral("defaultsButton"));
    QVERIFY(defaults);
    defaults->click();
    QCOMPARE(w.controlPanel()->controls().learningRate, 100.0);
    QVERIFY(!w.controlPanel()->controls().pauseOnNonFinite);
}

void TestMainWindow::closingMidRunStopsTheWorker()
{
    auto *w = new MainWindow(newLiveSession);
    w->selectScenario(QStringLiteral("safe-training"));
    w->setSteps(1000000);
    QVERIFY(w->startRun());
    QTRY_VERIFY(w->recordsShown() > 0);  // the worker is mid-run
    // The destructor stops and joins the worker: it must come back, not wait for a million steps.
    const testing::Watchdog limit("closing the window mid-run", std::chrono::seconds(60));
    w->close();
    delete w;
}

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QStandardPaths::setTestModeEnabled(true);  // QSettings go to a test location
    QApplication app(argc, argv);
    TestMainWindow t;
    return QTest::qExec(&t, argc, argv);
}
#include "tst_main_window.moc"
