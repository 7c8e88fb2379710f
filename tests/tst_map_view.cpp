// The map's rows follow the layer tree: which rows a tree and its open modules give, a closed
// module's worst cell, labels that never overprint, and the widget paging through 600 modules.
#include "run/map_rows.h"
#include "run/run_store.h"
#include "widgets/map_cell_text.h"
#include "widgets/map_row_labels.h"
#include "widgets/nan_map_view.h"

#include <QComboBox>
#include <QFontMetrics>
#include <QScrollBar>
#include <QSignalSpy>
#include <QtTest>

#include <qcustomplot.h>

#include <cmath>

using namespace nanscope;

namespace {

// A ResNet-like tree in named_modules() order.
std::vector<Layer> resnetLike()
{
    return {{0, "", "Net", -1},
            {1, "conv1", "Conv2d", 0},
            {2, "layer1", "Sequential", 0},
            {3, "layer1.0", "BasicBlock", 2},
            {4, "layer1.0.conv1", "Conv2d", 3},
            {5, "layer1.0.bn1", "BatchNorm2d", 3},
            {6, "layer1.1", "BasicBlock", 2},
            {7, "layer1.1.conv1", "Conv2d", 6},
            {8, "fc", "Linear", 0}};
}

std::vector<Layer> flat(int count)
{
    std::vector<Layer> layers{{0, "", "BenchModel", -1}};
    for (int i = 1; i < count; ++i)
        layers.push_back(
            {i, "block" + std::to_string((i - 1) / 3) + ".layer" + std::to_string((i - 1) % 3), "Linear", 0});
    return layers;
}

// One step: every layer's output observed, NaN in `nanShare` of each listed layer's values.
StepRecord stepWith(int step, std::size_t layers, const std::vector<std::pair<int, double>> &nanShare)
{
    StepRecord r;
    r.step = step;
    r.layers.resize(layers);
    for (std::size_t l = 0; l < layers; ++l) {
        TensorHealth &f = r.layers[l].forward;
        f.present = true;
        f.numel = 100;
        f.absMax = double(l + 1);
    }
    for (const auto &[layer, share] : nanShare)
        r.layers[std::size_t(layer)].forward.nan = std::int64_t(100 * share);
    return r;
}

QList<int> rowLayers(const std::vector<MapRow> &rows)
{
    QList<int> out;
    for (const MapRow &r : rows)
        out << r.layer;
    return out;
}

}  // namespace

class TestMapView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void subtreesEndWhereTheNextSiblingBegins();
    void rowsFollowTheOpenModules_data();
    void rowsFollowTheOpenModules();
    void aClosedModuleShowsItsWorstCell();
    void labelsAreIndentedAndElided();
    void manyModulesPageWithoutOverprinting();
    void clickingALabelOpensAndClosesItsModule();
    void magnitudeScaleTopsAtThePrecisionsLargest();
    void aThinnedStepSaysItsChunkStandsIn();
};

void TestMapView::subtreesEndWhereTheNextSiblingBegins()
{
    QCOMPARE(subtreeEnds(resnetLike()), (std::vector<int>{8, 1, 7, 5, 4, 5, 7, 7, 8}));
    QCOMPARE(subtreeEnds(flat(4)), (std::vector<int>{3, 1, 2, 3}));
    QCOMPARE(subtreeEnds({}), std::vector<int>{});
}

void TestMapView::rowsFollowTheOpenModules_data()
{
    QTest::addColumn<QList<int>>("closed");
    QTest::addColumn<QList<int>>("layers");
    QTest::addColumn<QList<int>>("depths");
    QTest::addColumn<QList<int>>("lastMembers");
    QTest::newRow("all open") << QList<int>{} << QList<int>{0, 1, 2, 3, 4, 5, 6, 7, 8}
                              << QList<int>{0, 1, 1, 2, 3, 3, 2, 3, 1} << QList<int>{0, 1, 2, 3, 4, 5, 6, 7, 8};
    QTest::newRow("layer1 closed") << QList<int>{2} << QList<int>{0, 1, 2, 8} << QList<int>{0, 1, 1, 1}
                                   << QList<int>{0, 1, 7, 8};
    QTest::newRow("a block closed") << QList<int>{3} << QList<int>{0, 1, 2, 3, 6, 7, 8}
                                    << QList<int>{0, 1, 1, 2, 2, 3, 1} << QList<int>{0, 1, 2, 5, 6, 7, 8};
    QTest::newRow("the model closed") << QList<int>{0, 3} << QList<int>{0} << QList<int>{0} << QList<int>{8};
    QTest::newRow("a leaf 'closed' stays one row")
        << QList<int>{4} << QList<int>{0, 1, 2, 3, 4, 5, 6, 7, 8} << QList<int>{0, 1, 1, 2, 3, 3, 2, 3, 1}
        << QList<int>{0, 1, 2, 3, 4, 5, 6, 7, 8};
}

void TestMapView::rowsFollowTheOpenModules()
{
    QFETCH(QList<int>, closed);
    QFETCH(QList<int>, layers);
    QFETCH(QList<int>, depths);
    QFETCH(QList<int>, lastMembers);
    std::vector<bool> expanded(9, true);
    for (int c : closed)
        expanded[std::size_t(c)] = false;
    const std::vector<MapRow> rows = visibleRows(resnetLike(), expanded);
    QCOMPARE(rowLayers(rows), layers);
    QList<int> gotDepths, gotLast;
    for (const MapRow &r : rows) {
        gotDepths << r.depth;
        gotLast << r.lastMember;
        QCOMPARE(r.collapsed, r.lastMember > r.layer);
    }
    QCOMPARE(gotDepths, depths);
    QCOMPARE(gotLast, lastMembers);
    // Every layer has exactly one row that shows it.
    for (int l = 0; l < 9; ++l)
        QVERIFY(rowOfLayer(rows, l) >= 0);
}

void TestMapView::aClosedModuleShowsItsWorstCell()
{
    NanMapData data;
    data.reset(9);
    data.append(stepWith(0, 9, {{5, 0.5}, {7, 0.1}}));
    data.append(stepWith(1, 9, {}));
    std::vector<bool> expanded(9, true);
    expanded[2] = false;
    const std::vector<MapRow> rows = visibleRows(resnetLike(), expanded);
    const MapView nanShare{MapKind::Forward, MapMeasure::NonFinite, Precision::FP32};
    double value = 0;
    QCOMPARE(worstMember(data, nanShare, rows[2], 0, &value), 5);  // bn1 holds the larger share
    QCOMPARE(value, 0.2 + 0.8 * 0.5);
    QCOMPARE(rowOfLayer(rows, 5), 2);
    // Magnitude: NaN is the top of the scale; on a finite step, the largest output of the subtree
    // (layer 7's 8.0).
    const MapView magnitude{MapKind::Forward, MapMeasure::Magnitude, Precision::FP32};
    QCOMPARE(worstMember(data, magnitude, rows[2], 0, &value), 5);
    QCOMPARE(value, std::log10(3.4028234663852886e38));
    QCOMPARE(worstMember(data, magnitude, rows[2], 1, &value), 7);
    QCOMPARE(value, std::log10(8.0));
    // A row whose members observed nothing has no worst member.
    const MapView params{MapKind::Params, MapMeasure::NonFinite, Precision::FP32};
    QCOMPARE(worstMember(data, params, rows[2], 0, &value), -1);
    QVERIFY(std::isnan(value));
}

void TestMapView::labelsAreIndentedAndElided()
{
    const std::vector<Layer> layers = resnetLike();
    const QFontMetrics metrics(QFont{});
    const std::vector<MapRow> rows = visibleRows(layers, std::vector<bool>(9, true));
    const int wide = metrics.averageCharWidth() * 40;
    QCOMPARE(rowLabel(layers, rows[0], metrics, wide), QStringLiteral("▾ (model)"));
    QCOMPARE(rowLabel(layers, rows[4], metrics, wide), QStringLiteral("      conv1"));  // depth 3: its own name
    QCOMPARE(rowLabel(layers, rows[3], metrics, wide), QStringLiteral("    ▾ 0"));
    std::vector<bool> closed(9, true);
    closed[2] = false;
    QCOMPARE(rowLabel(layers, visibleRows(layers, closed)[2], metrics, wide), QStringLiteral("  ▸ layer1"));
    // A child whose path does not extend its parent's keeps its whole path.
    QCOMPARE(rowLabel(flat(3), visibleRows(flat(3), {})[1], metrics, wide), QStringLiteral("  block0.layer0"));
    // Too long for the width: elided in the middle, never wider than asked.
    const std::vector<Layer> longName{{0, "", "Net", -1},
                                      {1, "encoder_layer_with_a_very_long_name_indeed", "Linear", 0}};
    const int narrow = metrics.averageCharWidth() * 16;
    const QString label = rowLabel(longName, visibleRows(longName, {})[1], metrics, narrow);
    QVERIFY2(label.contains(QChar(0x2026)), qPrintable(label));
    QVERIFY(label.trimmed().startsWith(QLatin1String("enc")));
    QVERIFY(label.endsWith(QLatin1String("deed")) || label.endsWith(QLatin1String("ed")));
    QVERIFY(metrics.horizontalAdvance(label) <= narrow);
    QVERIFY(minimumRowHeight(metrics) > metrics.height());
}

void TestMapView::manyModulesPageWithoutOverprinting()
{
    RunStore store;
    store.reset(flat(600));
    for (int step = 0; step < 20; ++step)
        store.append(stepWith(step, 600,
                              step == 10 ? std::vector<std::pair<int, double>>{{599, 0.3}}
                                         : std::vector<std::pair<int, double>>{}));
    NanMapView view;
    view.resize(900, 420);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.refresh(store);
    QTRY_VERIFY(view.plot()->axisRect()->height() > 100);
    view.refresh(store);
    QCOMPARE(view.rowCount(), 600);
    QVERIFY(view.rowsShown() > 5 && view.rowsShown() < 600);
    auto *scroll = view.findChild<QScrollBar *>(QStringLiteral("mapRows"));
    QVERIFY(scroll && scroll->isVisible());
    QCOMPARE(scroll->maximum(), 600 - view.rowsShown());
    // One label per row in view, each row at least a text line high.
    QCOMPARE(view.rowLabels().size(), view.rowsShown());
    const QFontMetrics metrics(view.plot()->yAxis->tickLabelFont());
    QVERIFY(view.plot()->axisRect()->height() / view.rowsShown() >= minimumRowHeight(metrics));
    // The last module is out of view until it is selected; then its NaN cell is drawn.
    QVERIFY(std::isnan(view.shownValue(599, 10)));
    view.selectLayer(599);
    QVERIFY(view.firstRowShown() + view.rowsShown() > 599);
    QCOMPARE(view.shownValue(599, 10), 0.2 + 0.8 * 0.3);
    QCOMPARE(view.rowLabels().last(), QStringLiteral("  block199.layer1"));
}

void TestMapView::clickingALabelOpensAndClosesItsModule()
{
    RunStore store;
    store.reset(resnetLike());
    store.append(stepWith(0, 9, {{5, 0.5}}));
    store.append(stepWith(1, 9, {}));
    NanMapView view;
    view.resize(700, 500);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.refresh(store);
    QTRY_VERIFY(view.plot()->axisRect()->height() > 100);
    view.refresh(store);
    QCOMPARE(view.rowCount(), 9);
    QSignalSpy toggled(&view, &NanMapView::rowToggled);
    QCustomPlot *plot = view.plot();
    plot->replot();
    const QPoint label(plot->axisRect()->left() - 10, int(plot->yAxis->coordToPixel(2)));  // layer1's row
    QCOMPARE(view.labelAt(label), 2);
    QTest::mouseClick(plot, Qt::LeftButton, {}, label);
    QCOMPARE(toggled.count(), 1);
    QCOMPARE(toggled.at(0).at(0).toInt(), 2);
    QCOMPARE(toggled.at(0).at(1).toBool(), false);
    QCOMPARE(view.rowCount(), 4);
    QVERIFY(!view.isExpanded(2));
    // The closed row shows bn1's NaN share and says whose it is.
    QCOMPARE(view.shownValue(5, 0), 0.2 + 0.8 * 0.5);
    QVERIFY2(view.describeCell(2, 0).contains(QLatin1String("the worst is layer1.0.bn1")),
             qPrintable(view.describeCell(2, 0)));
    // A click on a cell of the closed row selects the layer that is worst there.
    QSignalSpy clicked(&view, &NanMapView::cellClicked);
    plot->replot();
    QTest::mouseClick(plot, Qt::LeftButton, {},
                      QPoint(int(plot->xAxis->coordToPixel(0)), int(plot->yAxis->coordToPixel(2))));
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.at(0).at(0).toInt(), 5);
    QCOMPARE(clicked.at(0).at(1).toInt(), 0);
    // A second click on the label opens it again.
    plot->replot();
    QTest::mouseClick(plot, Qt::LeftButton, {},
                      QPoint(plot->axisRect()->left() - 10, int(plot->yAxis->coordToPixel(2))));
    QCOMPARE(view.rowCount(), 9);
    QCOMPARE(toggled.at(1).at(1).toBool(), true);
}

void TestMapView::magnitudeScaleTopsAtThePrecisionsLargest()
{
    RunStore store;
    store.reset(resnetLike());
    store.append(stepWith(0, 9, {}));
    NanMapView view;
    view.resize(700, 500);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.refresh(store);
    view.setMeasure(MapMeasure::Magnitude);
    // Outputs of 1 to 9 are far from fp32's largest value: the scale fits them and says so.
    QCOMPARE(view.scale().upper, 2.0);
    QVERIFY2(view.scale().title.find("fp32 max: off scale") != std::string::npos, view.scale().title.c_str());
    view.setPrecision(Precision::FP16);  // within 8 decades of 65504: it tops the scale
    QCOMPARE(view.scale().upper, std::log10(65504.0));
    QCOMPARE(view.scale().ticks.back().second, std::string("fp16 max"));
    // The colour scale above the map shows that range, its ticks and its title.
    const auto *scalePlot = view.findChild<QCustomPlot *>(QStringLiteral("mapScale"));
    QVERIFY(scalePlot && scalePlot->plotLayout()->elementCount() == 1);
    auto *colourScale = qobject_cast<QCPColorScale *>(scalePlot->plotLayout()->elementAt(0));
    QVERIFY(colourScale);
    QCOMPARE(colourScale->dataRange().upper, std::log10(65504.0));
    QCOMPARE(colourScale->dataRange().lower, view.scale().lower);
    QCOMPARE(colourScale->label(), QString::fromStdString(view.scale().title));
    const auto ticker = colourScale->axis()->ticker().dynamicCast<QCPAxisTickerText>();
    QVERIFY(ticker);
    QCOMPARE(ticker->ticks().size(), int(view.scale().ticks.size()));
    QCOMPARE(ticker->ticks().last(), QStringLiteral("fp16 max"));
    QCOMPARE(view.shownValue(8, 0), std::log10(9.0));  // fc's output: 9.0
    view.setMeasure(MapMeasure::UpdateRatio);
    QVERIFY(std::isnan(view.shownValue(8, 0)));  // no update measured
    QVERIFY(!view.findChild<QComboBox *>(QStringLiteral("mapKind"))->isEnabled());
}

// A step a thinned run file kept no layer detail of (its cells are its chunk's) says so on hover,
// alone in its column or among kept steps.
void TestMapView::aThinnedStepSaysItsChunkStandsIn()
{
    const std::vector<Layer> layers = flat(3);
    NanMapData data(4);
    data.reset(3);
    for (int step = 0; step < 8; ++step) {
        StepRecord r = stepWith(step, 3, {});
        r.layerDetail = step == 0 ? LayerDetail::First : LayerDetail::None;
        data.append(r);
    }
    QCOMPARE(data.stepsPerColumn(), 2);
    const MapRow row{1, 0, 1, false, false};
    const MapView view;
    QCOMPARE(data.stepsWithoutDetail(0), 1);
    QCOMPARE(data.stepsWithoutDetail(1), 2);
    const QString mixed = describeMapCell(data, layers, view, row, 0), thinned = describeMapCell(data, layers, view, row, 1);
    QVERIFY2(mixed.contains(QLatin1String("1 of these steps kept no layer detail")), qPrintable(mixed));
    QVERIFY2(thinned.contains(QLatin1String("The run file kept no layer detail of these steps")), qPrintable(thinned));
    NanMapData kept(4);
    kept.reset(3);
    kept.append(stepWith(0, 3, {}));
    QVERIFY(!describeMapCell(kept, layers, view, row, 0).contains(QLatin1String("layer detail")));
}

QTEST_MAIN(TestMapView)
#include "tst_map_view.moc"
