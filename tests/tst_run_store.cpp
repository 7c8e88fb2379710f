// The window's bounded run data: decimation keeps extremes and every non-finite step, the NaN map
// keeps each row's worst cell, and the CSV export holds every step.
#include "run/map_measure.h"
#include "run/run_store.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <limits>

using namespace nanscope;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

StepRecord record(int step, int layers, int badLayer = -1, std::int64_t nan = 0, std::int64_t numel = 100)
{
    StepRecord r;
    r.step = step;
    r.loss = badLayer >= 0 ? kNaN : 1.0 / (step + 1);
    r.gradNorm = r.gradNormClipped = 2.0;
    r.learningRate = 0.1;
    r.layers.resize(std::size_t(layers));
    for (int l = 0; l < layers; ++l) {
        TensorHealth &f = r.layers[std::size_t(l)].forward;
        f.present = true;
        f.numel = numel;
        if (l == badLayer)
            f.nan = nan;
    }
    if (badLayer >= 0) {
        r.origin.step = step;
        r.origin.phase = Phase::Forward;
        r.origin.layer = badLayer;
    }
    return r;
}

// A varied run: a loss with NaN and Inf stretches, one skipped step in some chunks (with the loss
// scale halving), stretches where layers go non-finite at different fractions, growing outputs.
StepRecord variedRecord(int step, int layers, int badFrom)
{
    StepRecord r = record(step, layers);
    r.loss = step % 97 == 13 ? kNaN : step % 89 == 7 ? kInf : std::sin(step * 0.37) * 10.0;
    r.gradNorm = step % 101 == 50 ? -kInf : std::cos(step * 0.11) + 2.0;
    r.gradNormClipped = std::min(r.gradNorm, 2.5);
    r.lossScale = 65536.0 / double(1 << std::min(step / 300, 12));
    r.skipped = step % 150 == 149;
    r.stepMillis = 0.5 + step % 3;
    for (int l = 0; l < layers; ++l) {
        LayerHealth &h = r.layers[std::size_t(l)];
        h.forward.absMax = std::fabs(std::sin(step * 0.01 * (l + 1))) * (step + 1);
        h.forward.finiteL2 = 3.0 * h.forward.absMax + std::cos(step * 0.3);
        h.grad = h.forward;
        h.updateRatio = step % 5 == 0 ? kNaN : 1e-3 * (1.5 + std::sin(step * 0.7 * (l + 1)));
        if (step >= badFrom && step % 7 != 0 && l >= 1)
            h.grad.posInf = (step + l) % 23;  // fractions that rise and fall: the worst step moves
    }
    if (step >= badFrom && step % 7 != 0) {
        r.origin.step = step;
        r.origin.phase = Phase::Backward;
        r.origin.layer = 1 + step % (layers - 1);
        r.origin.produced = true;
    }
    return r;
}

bool sameValue(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void compareSeries(const DecimatedSeries &a, const DecimatedSeries &b)
{
    QCOMPARE(a.valuesPerBucket(), b.valuesPerBucket());
    QCOMPARE(a.valueCount(), b.valueCount());
    QCOMPARE(a.buckets().size(), b.buckets().size());
    for (std::size_t i = 0; i < a.buckets().size(); ++i) {
        const SeriesBucket &x = a.buckets()[i], &y = b.buckets()[i];
        QCOMPARE(x.firstStep, y.firstStep);
        QCOMPARE(x.lastStep, y.lastStep);
        QCOMPARE(x.count, y.count);
        QCOMPARE(x.finiteCount, y.finiteCount);
        if (x.finiteCount > 0) {
            QCOMPARE(x.min, y.min);
            QCOMPARE(x.max, y.max);
        }
        QCOMPARE(x.firstNonFiniteStep, y.firstNonFiniteStep);
        QVERIFY(sameValue(x.firstNonFiniteValue, y.firstNonFiniteValue));
    }
}

}  // namespace

class TestRunStore : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void seriesStaysBoundedAndKeepsExtremes_data();
    void seriesStaysBoundedAndKeepsExtremes();
    void seriesKeepsEveryNonFiniteBucket();
    void decadesSpanned_data();
    void decadesSpanned();
    void mapKeepsTheWorstCellOfAMergedColumn();
    void mapFindsTheColumnOfAStep();
    void mapStepTicksAreRound_data();
    void mapStepTicksAreRound();
    void skippedStepsAndLossScaleAreKept();
    void storeKeepsTheFirstOriginAndBoundedMarks();
    void chunksGiveTheSameStoreAsTheirSteps_data();
    void chunksGiveTheSameStoreAsTheirSteps();
};

void TestRunStore::seriesStaysBoundedAndKeepsExtremes_data()
{
    QTest::addColumn<int>("capacity");
    QTest::addColumn<int>("values");
    QTest::addColumn<int>("expectedBuckets");
    QTest::addColumn<int>("expectedWidth");
    QTest::addRow("under capacity") << 16 << 10 << 10 << 1;
    QTest::addRow("exactly full") << 16 << 16 << 16 << 1;
    QTest::addRow("one past") << 16 << 17 << 9 << 2;
    QTest::addRow("a million") << 2048 << 1000000 << 1954 << 512;
}

void TestRunStore::seriesStaysBoundedAndKeepsExtremes()
{
    QFETCH(int, capacity);
    QFETCH(int, values);
    QFETCH(int, expectedBuckets);
    QFETCH(int, expectedWidth);
    DecimatedSeries s{std::size_t(capacity)};
    // A sawtooth with one spike: the spike must survive any amount of merging.
    const int spikeAt = values / 3;
    for (int i = 0; i < values; ++i)
        s.append(i, i == spikeAt ? 1e6 : double(i % 7));
    QCOMPARE(int(s.buckets().size()), expectedBuckets);
    QCOMPARE(s.valuesPerBucket(), expectedWidth);
    QCOMPARE(s.valueCount(), (long long)values);
    double maxSeen = -1, minSeen = 1e9;
    long long counted = 0;
    for (const SeriesBucket &b : s.buckets()) {
        maxSeen = std::max(maxSeen, b.max);
        minSeen = std::min(minSeen, b.min);
        counted += b.count;
    }
    QCOMPARE(maxSeen, 1e6);
    QCOMPARE(minSeen, 0.0);
    QCOMPARE(counted, (long long)values);
    QCOMPARE(s.buckets().front().firstStep, 0);
    QCOMPARE(s.buckets().back().lastStep, values - 1);
}

void TestRunStore::decadesSpanned_data()
{
    QTest::addColumn<QVector<double>>("values");
    QTest::addColumn<double>("decades");
    QTest::addRow("empty") << QVector<double>{} << 0.0;
    QTest::addRow("one value") << QVector<double>{5.0} << 0.0;
    QTest::addRow("flat") << QVector<double>{1.0, 2.0, 1.5} << std::log10(2.0);
    QTest::addRow("diverging, then NaN") << QVector<double>{1.0, 10.0, 1e25, NAN, INFINITY} << 25.0;
    QTest::addRow("zeros and negatives ignored") << QVector<double>{0.0, -5.0, 100.0, 0.1} << 3.0;
    QTest::addRow("never positive") << QVector<double>{0.0, -1.0} << 0.0;
}

void TestRunStore::decadesSpanned()
{
    QFETCH(QVector<double>, values);
    QFETCH(double, decades);
    DecimatedSeries s(4);  // few buckets: merged buckets still give the span
    for (int i = 0; i < values.size(); ++i)
        s.append(i, values[i]);
    QVERIFY2(std::abs(nanscope::decadesSpanned(s) - decades) < 1e-9,
             qPrintable(QString::number(nanscope::decadesSpanned(s))));
}

void TestRunStore::seriesKeepsEveryNonFiniteBucket()
{
    DecimatedSeries s{8};
    for (int i = 0; i < 100; ++i)
        s.append(i, i == 37 ? kNaN : (i == 90 ? -kInf : 1.0));
    int marked = 0;
    for (const SeriesBucket &b : s.buckets())
        if (b.hasNonFinite()) {
            ++marked;
            QVERIFY(b.firstNonFiniteStep == 37 || b.firstNonFiniteStep == 90);
            QVERIFY(b.firstStep <= b.firstNonFiniteStep && b.firstNonFiniteStep <= b.lastStep);
        }
    QCOMPARE(marked, 2);
    QVERIFY(s.buckets().size() <= 8);
}

void TestRunStore::mapKeepsTheWorstCellOfAMergedColumn()
{
    NanMapData map{4};
    map.reset(3);
    for (int step = 0; step < 10; ++step)
        map.append(step == 5 ? record(step, 3, 1, 40) : (step == 6 ? record(step, 3, 1, 10) : record(step, 3)));
    QCOMPARE(map.stepsPerColumn(), 4);
    QCOMPARE(map.columnCount(), 3);  // steps 0-3, 4-7, 8-9
    const MapCell &bad = map.cell(MapKind::Forward, 1, 1);
    QCOMPARE(bad.step, 5);
    QCOMPARE(bad.nan, std::int64_t(40));
    QCOMPARE(bad.fraction(), 0.4);
    QCOMPARE(map.cell(MapKind::Forward, 1, 0).nonFinite(), std::int64_t(0));
    QVERIFY(map.cell(MapKind::Forward, 1, 0).present);
    QVERIFY(!map.cell(MapKind::Params, 1, 0).present);  // nothing observed there
    QCOMPARE(mapColourValue(bad), 0.2 + 0.8 * 0.4);
    QCOMPARE(mapColourValue(map.cell(MapKind::Forward, 0, 0)), 0.0);
    QVERIFY(std::isnan(mapColourValue(map.cell(MapKind::Grad, 0, 0))));
}

void TestRunStore::mapFindsTheColumnOfAStep()
{
    NanMapData map{4};
    map.reset(1);
    for (int step = 0; step < 10; ++step)
        map.append(record(step, 1));
    QCOMPARE(map.columnOfStep(0), 0);
    QCOMPARE(map.columnOfStep(5), 1);
    QCOMPARE(map.columnOfStep(9), 2);
    QCOMPARE(map.columnOfStep(10), -1);
}

void TestRunStore::mapStepTicksAreRound_data()
{
    QTest::addColumn<int>("capacity");
    QTest::addColumn<int>("first");
    QTest::addColumn<int>("steps");
    QTest::addColumn<QVector<int>>("ticks");
    QTest::addRow("36 steps") << 1024 << 0 << 36 << QVector<int>{0, 5, 10, 15, 20, 25, 30, 35};
    QTest::addRow("100 steps") << 1024 << 0 << 100 << QVector<int>{0, 20, 40, 60, 80};
    QTest::addRow("from step 7") << 1024 << 7 << 23 << QVector<int>{10, 15, 20, 25};
    QTest::addRow("4 steps a column") << 4 << 0 << 16 << QVector<int>{0, 2, 4, 6, 8, 10, 12, 14};
    QTest::addRow("one step") << 1024 << 3 << 1 << QVector<int>{3};
}

void TestRunStore::mapStepTicksAreRound()
{
    QFETCH(int, capacity);
    QFETCH(int, first);
    QFETCH(int, steps);
    QFETCH(QVector<int>, ticks);
    NanMapData map{std::size_t(capacity)};
    map.reset(1);
    for (int step = first; step < first + steps; ++step)
        map.append(record(step, 1));
    QVector<int> got;
    double previous = -1.0;
    for (const auto &[key, step] : roundStepTicks(map)) {
        got.push_back(step);
        // Inside the column that holds the step, in order.
        const int c = map.columnOfStep(step);
        QVERIFY(key >= c - 0.5 && key <= c + 0.5);
        QVERIFY(key > previous);
        previous = key;
    }
    QCOMPARE(got, ticks);
}

void TestRunStore::skippedStepsAndLossScaleAreKept()
{
    RunStore store;
    store.reset({Layer{0, "", "Model", -1}});
    QVERIFY(!store.usesLossScaling());
    double scale = 65536;
    for (int step = 0; step < 10; ++step) {
        StepRecord r = record(step, 1);
        r.lossScale = scale;
        r.skipped = step == 2 || step == 3;
        if (r.skipped)
            scale /= 2;
        store.append(r);
    }
    QVERIFY(store.usesLossScaling());
    const auto &skipped = store.skippedSteps().buckets();
    QCOMPARE(int(skipped.size()), 2);
    QCOMPARE(skipped[0].firstStep, 2);
    QCOMPARE(skipped[0].max, 65536.0);
    QCOMPARE(skipped[1].max, 32768.0);
    QCOMPARE(store.series(Series::LossScale).buckets().back().max, 16384.0);
}

void TestRunStore::storeKeepsTheFirstOriginAndBoundedMarks()
{
    RunStore store;
    store.reset({Layer{0, "", "Model", -1}, Layer{1, "fc", "Linear", 0}});
    store.append(record(0, 2));
    store.append(record(1, 2, 1, 3));
    store.append(record(2, 2, 0, 3));
    QCOMPARE(store.firstOrigin().step, 1);
    QCOMPARE(store.firstOrigin().layer, 1);
    for (int i = 0; i < 1000; ++i)
        store.addControlMark(i, "lr " + std::to_string(i));
    QCOMPARE(int(store.controlMarks().size()), 256);
    QCOMPARE(store.controlMarks().back().text, std::string("lr 999"));
    store.reset({});
    QVERIFY(!store.firstOrigin().valid());
    QCOMPARE(store.stepsSeen(), 0LL);
}

void TestRunStore::chunksGiveTheSameStoreAsTheirSteps_data()
{
    QTest::addColumn<int>("steps");
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("seriesCapacity");
    QTest::addColumn<int>("mapCapacity");
    QTest::addColumn<int>("badFrom");
    QTest::newRow("whole chunks") << 64 * 40 << 3 << 16 << 8 << 1000;
    QTest::newRow("a short last chunk") << 64 * 33 + 17 << 4 << 8 << 4 << 700;
    QTest::newRow("healthy") << 3000 << 2 << 32 << 16 << (1 << 30);
}

// The window opening a long run from its chunks (the steps of the last chunk one by one, as
// RecordedRun plays them) holds what it would hold from every record, once the buckets are at
// least a chunk wide.
void TestRunStore::chunksGiveTheSameStoreAsTheirSteps()
{
    QFETCH(int, steps);
    QFETCH(int, layers);
    QFETCH(int, seriesCapacity);
    QFETCH(int, mapCapacity);
    QFETCH(int, badFrom);
    std::vector<Layer> layerList;
    for (int l = 0; l < layers; ++l)
        layerList.push_back({l, l == 0 ? "" : "fc" + std::to_string(l), "Linear", l == 0 ? -1 : 0});
    RunStore stepwise{std::size_t(seriesCapacity), std::size_t(mapCapacity)};
    RunStore chunked{std::size_t(seriesCapacity), std::size_t(mapCapacity)};
    stepwise.reset(layerList);
    chunked.reset(layerList);
    std::vector<StepRecord> records;
    for (int step = 0; step < steps; ++step)
        records.push_back(variedRecord(step, layers, badFrom));
    const int lastChunk = chunkOfStep(steps - 1);
    StepChunk chunk;
    for (const StepRecord &r : records) {
        stepwise.append(r);
        if (chunkOfStep(r.step) == lastChunk) {
            chunked.append(r);
            continue;
        }
        if (chunk.index != chunkOfStep(r.step))
            chunk = StepChunk(chunkOfStep(r.step), std::size_t(layers));
        chunk.add(r);
        if (r.step % kChunkSteps == kChunkSteps - 1)
            chunked.appendChunk(chunk);
    }

    QVERIFY(stepwise.series(Series::Loss).valuesPerBucket() >= kChunkSteps);
    for (int s = 0; s < kSeriesCount; ++s)
        compareSeries(chunked.series(Series(s)), stepwise.series(Series(s)));
    compareSeries(chunked.skippedSteps(), stepwise.skippedSteps());
    QCOMPARE(chunked.usesLossScaling(), stepwise.usesLossScaling());
    QCOMPARE(chunked.stepsSeen(), stepwise.stepsSeen());
    QCOMPARE(chunked.lastStep(), stepwise.lastStep());
    QCOMPARE(chunked.firstOrigin().step, stepwise.firstOrigin().step);
    QCOMPARE(chunked.firstOrigin().layer, stepwise.firstOrigin().layer);
    const NanMapData &a = chunked.map(), &b = stepwise.map();
    QCOMPARE(a.columnCount(), b.columnCount());
    QCOMPARE(a.stepsPerColumn(), b.stepsPerColumn());
    int badCells = 0;
    for (int c = 0; c < a.columnCount(); ++c) {
        QCOMPARE(a.firstStep(c), b.firstStep(c));
        QCOMPARE(a.lastStep(c), b.lastStep(c));
        for (int k = 0; k < kMapKindCount; ++k)
            for (int l = 0; l < layers; ++l) {
                const MapCell &x = a.cell(MapKind(k), c, l), &y = b.cell(MapKind(k), c, l);
                QCOMPARE(x.present, y.present);
                QCOMPARE(x.step, y.step);
                QCOMPARE(x.numel, y.numel);
                QCOMPARE(x.nonFinite(), y.nonFinite());
                QCOMPARE(x.absMax, y.absMax);
                QCOMPARE(x.norm, y.norm);
                badCells += x.nonFinite() > 0 ? 1 : 0;
                if (k == 0) {
                    const double r = a.updateRatio(c, l), q = b.updateRatio(c, l);
                    QVERIFY(r == q || (std::isnan(r) && std::isnan(q)));
                }
            }
    }
    QCOMPARE(badCells > 0, badFrom < steps);
}

QTEST_GUILESS_MAIN(TestRunStore)
#include "tst_run_store.moc"
