// What a cell of the layer x step map shows under each measure (the NaN share, magnitude, headroom
// against the run's precision, update ratio, gradient norm) for a column that folds two steps, and
// each measure's colour scale: its range, ticks and the label at its top.
#include "run/map_measure.h"

#include <QtTest>

#include <cmath>
#include <limits>

using namespace nanscope;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

class TestMapMeasure : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void measuresOfAMergedColumn_data();
    void measuresOfAMergedColumn();
    void measureScales_data();
    void measureScales();
};

void TestMapMeasure::measuresOfAMergedColumn_data()
{
    QTest::addColumn<int>("measure");
    QTest::addColumn<int>("precision");
    QTest::addColumn<int>("layer");
    QTest::addColumn<double>("expected");
    const auto add = [](const char *name, MapMeasure m, Precision p, int layer, double expected) {
        QTest::newRow(name) << int(m) << int(p) << layer << expected;
    };
    // Column 1 folds steps 2 and 3: layer 0's outputs 3000 and 4000, layer 1's 10 then +Inf.
    add("magnitude: the largest of the column", MapMeasure::Magnitude, Precision::FP32, 0, std::log10(4000.0));
    add("magnitude: overflowed is the top", MapMeasure::Magnitude, Precision::FP16, 1, std::log10(65504.0));
    add("headroom against fp16", MapMeasure::Headroom, Precision::FP16, 0, std::log10(4000.0 / 65504.0));
    add("headroom against fp32", MapMeasure::Headroom, Precision::FP32, 0, std::log10(4000.0 / 3.4028234663852886e38));
    add("headroom: overflowed is 0", MapMeasure::Headroom, Precision::FP16, 1, 0.0);
    add("update ratio: the largest step", MapMeasure::UpdateRatio, Precision::FP32, 0, std::log10(3e-3));
    add("update ratio: none measured", MapMeasure::UpdateRatio, Precision::FP32, 1, kNaN);
    add("gradient norm: the largest step", MapMeasure::GradNorm, Precision::FP32, 0, std::log10(40.0));
    add("gradient norm of zeros", MapMeasure::GradNorm, Precision::FP32, 1, kZeroValue);
    // Layer 1's step 3 is all +Inf (100 of 100): the top of the scale, dark red. Not a copy of the
    // formula: any fraction above 0 starts at 0.2 (the README's "at least orange") and 1 is 1.
    add("NaN fraction", MapMeasure::NonFinite, Precision::FP32, 1, 1.0);
}

void TestMapMeasure::measuresOfAMergedColumn()
{
    QFETCH(int, measure);
    QFETCH(int, precision);
    QFETCH(int, layer);
    QFETCH(double, expected);
    NanMapData map{2};
    map.reset(2);
    for (int step = 0; step < 4; ++step) {
        StepRecord r;
        r.step = step;
        r.layers.resize(2);
        for (LayerHealth &h : r.layers) {
            h.forward.present = true;
            h.forward.numel = 100;
        }
        r.layers[0].forward.absMax = 1000.0 * (step + 1);
        r.layers[1].forward.absMax = step == 3 ? kNaN : 10.0;  // no finite value left
        if (step == 3)
            r.layers[1].forward.posInf = 100;
        for (int l = 0; l < 2; ++l) {
            TensorHealth &g = r.layers[std::size_t(l)].paramGrads;
            g.present = true;
            g.numel = 10;
            g.finiteL2 = l == 0 ? 10.0 * (step + 1) : 0.0;
        }
        r.layers[0].updateRatio = step == 2 ? 3e-3 : 1e-3;
        map.append(r);
    }
    QCOMPARE(map.columnCount(), 2);  // steps 0-1 and 2-3
    QCOMPARE(map.cell(MapKind::Forward, 1, 0).absMax, 4000.0);
    const MapView view{MapKind::Forward, MapMeasure(measure), Precision(precision)};
    const double got = mapValue(map, view, 1, layer);
    if (std::isnan(expected))
        QVERIFY(std::isnan(got));
    else
        QVERIFY2(std::fabs(got - expected) < 1e-12, qPrintable(QString::number(got)));
}

void TestMapMeasure::measureScales_data()
{
    QTest::addColumn<int>("measure");
    QTest::addColumn<int>("precision");
    QTest::addColumn<double>("shownMin");
    QTest::addColumn<double>("shownMax");
    QTest::addColumn<double>("lower");
    QTest::addColumn<double>("upper");
    QTest::addColumn<QString>("topTick");
    const auto add = [](const char *name, MapMeasure m, Precision p, double lo, double hi, double lower, double upper,
                        const char *top) {
        QTest::newRow(name) << int(m) << int(p) << lo << hi << lower << upper << QString::fromLatin1(top);
    };
    add("NaN share", MapMeasure::NonFinite, Precision::FP32, kNaN, kNaN, 0, 1, "all");
    add("magnitude tops at fp16's largest", MapMeasure::Magnitude, Precision::FP16, -3.2, 2, -4, std::log10(65504.0),
        "fp16 max");
    add("magnitude tops at fp32's largest", MapMeasure::Magnitude, Precision::FP32, -3.2, 31, -4,
        std::log10(3.4028234663852886e38), "fp32 max");
    add("healthy magnitudes fit the data", MapMeasure::Magnitude, Precision::FP32, -3.2, 1.5, -4, 3, "1e2");
    add("headroom keeps four decades", MapMeasure::Headroom, Precision::FP16, -1.5, -0.2, -4, 0, "fp16 max");
    add("update ratios keep the usual range", MapMeasure::UpdateRatio, Precision::FP32, -3.5, -2.5, -5, 0, "1");
    add("an update ratio above 1 widens it", MapMeasure::UpdateRatio, Precision::FP32, -3.5, 1.2, -5, 2, "1e2");
    add("gradient norms fit the data", MapMeasure::GradNorm, Precision::FP32, -2.5, 3.5, -3, 4, "1e4");
    add("nothing shown yet", MapMeasure::GradNorm, Precision::FP32, kNaN, kNaN, -4, 1, "10");
}

void TestMapMeasure::measureScales()
{
    QFETCH(int, measure);
    QFETCH(int, precision);
    QFETCH(double, shownMin);
    QFETCH(double, shownMax);
    QFETCH(double, lower);
    QFETCH(double, upper);
    QFETCH(QString, topTick);
    const MeasureScale s =
        measureScale({MapKind::Forward, MapMeasure(measure), Precision(precision)}, shownMin, shownMax);
    QCOMPARE(s.lower, lower);
    QVERIFY(std::fabs(s.upper - upper) < 1e-9);
    QVERIFY(!s.title.empty());
    QVERIFY(s.ticks.size() >= 2 && s.ticks.size() <= 8);
    for (std::size_t i = 0; i < s.ticks.size(); ++i) {
        QVERIFY(s.ticks[i].first >= s.lower && s.ticks[i].first <= s.upper + 1e-9);
        if (i > 0)
            QVERIFY(s.ticks[i].first > s.ticks[i - 1].first);
    }
    QCOMPARE(QString::fromStdString(s.ticks.back().second), topTick);
}
QTEST_GUILESS_MAIN(TestMapMeasure)
#include "tst_map_measure.moc"
