// A stretch of a long run read back from its run file (run/stretch_read.h): single steps with their
// own layers where the file kept them and their chunk's elsewhere, chunks or coarse chunks for wider
// stretches, the level chosen by the map's width, and the plots' buckets spliced around it.
#include "synthetic_run.h"

#include "run/stretch_read.h"

#include "nanscope/run_file.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace nanscope;
using namespace nanscope::testing;

namespace {

constexpr int kLayers = LongRun::kLayers;
constexpr int kSteps = LongRun::kSteps;
constexpr int kNanStep = LongRun::kNanStep;

SeriesBucket bucket(int first, int last, double value)
{
    SeriesBucket b = SeriesBucket::of(first, value);
    b.lastStep = last;
    b.count = last - first + 1;
    return b;
}

}  // namespace

class TestStretch : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void levelFollowsTheMapWidth_data();
    void levelFollowsTheMapWidth();
    void singleStepsKeepWhatTheFileKept();
    void widerStretchesReadChunks_data();
    void widerStretchesReadChunks();
    void aCancelledReadStops();
    void plotsSpliceTheStretch();

private:
    std::shared_ptr<RunStore> read(int first, int last, StretchLevel level);

    QTemporaryDir dir_;
    QString path_;
    RunStore whole_;
};

void TestStretch::initTestCase()
{
    path_ = dir_.filePath(QStringLiteral("long.nsrun"));
    LongRun::record(path_);
    whole_.reset(syntheticLayers(kLayers));
}

std::shared_ptr<RunStore> TestStretch::read(int first, int last, StretchLevel level)
{
    const RunFile file(path_.toStdString());
    std::shared_ptr<RunStore> store = stretchStore(whole_);
    [&] { QVERIFY(readStretch(file, *store, first, last, level)); }();
    return store;
}

void TestStretch::levelFollowsTheMapWidth_data()
{
    QTest::addColumn<int>("steps");
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("level");
    QTest::addColumn<int>("mapColumns");
    // 13 layers: a full map of 1,024 columns; up to 2,048 single steps (the series' buckets).
    QTest::newRow("narrow, 2048 steps") << 2048 << 13 << int(StretchLevel::Steps) << 1024;
    QTest::newRow("narrow, 2049 steps") << 2049 << 13 << int(StretchLevel::Chunks) << 1024;
    QTest::newRow("narrow, 131072 steps") << 131072 << 13 << int(StretchLevel::Chunks) << 1024;
    QTest::newRow("narrow, 131073 steps") << 131073 << 13 << int(StretchLevel::CoarseChunks) << 1024;
    // 600 modules: 250 columns (600,000 cells), four pieces a column.
    QTest::newRow("wide, 1000 steps") << 1000 << 600 << int(StretchLevel::Steps) << 250;
    QTest::newRow("wide, 1001 steps") << 1001 << 600 << int(StretchLevel::Chunks) << 250;
    QTest::newRow("wide, 64000 steps") << 64000 << 600 << int(StretchLevel::Chunks) << 250;
    QTest::newRow("wide, 64001 steps") << 64001 << 600 << int(StretchLevel::CoarseChunks) << 250;
    QTest::newRow("very wide") << 100 << 5000 << int(StretchLevel::Steps) << 128;
}

void TestStretch::levelFollowsTheMapWidth()
{
    QFETCH(int, steps);
    QFETCH(int, layers);
    QFETCH(int, level);
    QFETCH(int, mapColumns);
    QCOMPARE(int(stretchLevel(steps, std::size_t(layers))), level);
    QCOMPARE(int(stretchMapColumns(std::size_t(layers))), mapColumns);
}

// Steps 2990..3010 around the NaN: one column a step, the lead-up and the NaN step with their own
// layers, the healthy steps after it by their chunk (said per column), the series one bucket a step.
void TestStretch::singleStepsKeepWhatTheFileKept()
{
    const std::shared_ptr<RunStore> s = read(2990, 3010, StretchLevel::Steps);
    const NanMapData &map = s->map();
    QCOMPARE(map.columnCount(), 21);
    QCOMPARE(map.stepsPerColumn(), 1);
    QCOMPARE(int(s->series(Series::Loss).buckets().size()), 21);
    QCOMPARE(s->lastStep(), 3010);
    const int nan = map.columnOfStep(kNanStep);
    QCOMPARE(map.firstStep(nan), kNanStep);
    QCOMPARE(map.cell(MapKind::Forward, nan, 4).nan, std::int64_t(128));
    QCOMPARE(map.cell(MapKind::Forward, nan, 1).nan, std::int64_t(0));
    QCOMPARE(map.layerDetail(nan), LayerDetail::NonFinite);
    for (int step = 2990; step < kNanStep; ++step) {
        QCOMPARE(map.layerDetail(map.columnOfStep(step)), LayerDetail::LeadUp);
        QCOMPARE(map.stepsWithoutDetail(map.columnOfStep(step)), 0);
    }
    for (int step = kNanStep + 1; step <= 3010; ++step) {
        const int c = map.columnOfStep(step);
        const bool sampled = step % KeepPolicy::kSampleEvery == 0;
        QCOMPARE(map.stepsWithoutDetail(c), sampled ? 0 : 1);
        QCOMPARE(map.stepsFromChunks(c), 0);
        QVERIFY(map.cell(MapKind::Forward, c, 2).present);  // a thinned step shows its chunk's
    }
    // The whole store has no origin here: the stretch's own first non-finite step is its origin.
    QCOMPARE(s->firstOrigin().step, kNanStep);
}

void TestStretch::widerStretchesReadChunks_data()
{
    QTest::addColumn<int>("level");
    QTest::addColumn<int>("columns");
    QTest::addColumn<int>("stepsPerColumn");
    // 6,000 steps: 94 chunks (the last one short), or 5 coarse chunks and the 14 chunks after them.
    QTest::newRow("chunks") << int(StretchLevel::Chunks) << 94 << 64;
    QTest::newRow("coarse chunks") << int(StretchLevel::CoarseChunks) << 6 << 1024;
}

void TestStretch::widerStretchesReadChunks()
{
    QFETCH(int, level);
    QFETCH(int, columns);
    QFETCH(int, stepsPerColumn);
    const std::shared_ptr<RunStore> s = read(0, kSteps - 1, StretchLevel(level));
    const NanMapData &map = s->map();
    QCOMPARE(map.columnCount(), columns);
    QCOMPARE(map.stepsPerColumn(), stepsPerColumn);
    QCOMPARE(s->stepsSeen(), (long long)kSteps);
    QCOMPARE(s->lastStep(), kSteps - 1);
    for (int c = 0; c < columns; ++c)
        QCOMPARE(map.stepsFromChunks(c), map.lastStep(c) - map.firstStep(c) + 1);
    const int nan = map.columnOfStep(kNanStep);
    QCOMPARE(map.cell(MapKind::Forward, nan, 4).nan, std::int64_t(128));
    QCOMPARE(map.cell(MapKind::Forward, nan, 4).step, kNanStep);
    QVERIFY(s->series(Series::Loss).buckets().size() == std::size_t(columns));

    // A stretch that begins inside a chunk starts at that chunk.
    const std::shared_ptr<RunStore> part = read(2000, 2999, StretchLevel(level));
    QCOMPARE(part->map().firstStep(0), 2000 / stepsPerColumn * stepsPerColumn);
    QVERIFY(part->lastStep() >= 2999);
}

void TestStretch::aCancelledReadStops()
{
    const RunFile file(path_.toStdString());
    const std::shared_ptr<RunStore> store = stretchStore(whole_);
    QVERIFY(!readStretch(file, *store, 0, kSteps - 1, StretchLevel::Steps, [] { return true; }));
    QCOMPARE(store->stepsSeen(), 0LL);
}

// The whole run's 64-step buckets with a stretch of single steps 70..80: the bucket that begins
// before the stretch stays, the one beginning inside it gives way, the later ones follow.
void TestStretch::plotsSpliceTheStretch()
{
    const std::vector<SeriesBucket> whole = {bucket(0, 63, 1.0), bucket(64, 127, 2.0), bucket(128, 191, 3.0)};
    DecimatedSeries stretch;
    for (int step = 70; step <= 80; ++step)
        stretch.append(step, 10.0 + step);
    std::vector<SeriesBucket> shown = withStretch(whole, &stretch);
    QCOMPARE(int(shown.size()), 3 + 11);
    QCOMPARE(shown[1].firstStep, 64);
    QCOMPARE(shown[2].firstStep, 70);
    QCOMPARE(shown[2].min, 80.0);
    QCOMPARE(shown[12].firstStep, 80);
    QCOMPARE(shown[13].firstStep, 128);
    // A stretch over the start of a bucket replaces it.
    DecimatedSeries over;
    for (int step = 60; step <= 70; ++step)
        over.append(step, 0.0);
    shown = withStretch(whole, &over);
    QCOMPARE(int(shown.size()), 1 + 11 + 1);
    QCOMPARE(shown.back().firstStep, 128);
    QCOMPARE(withStretch(whole, nullptr).size(), whole.size());
}

QTEST_GUILESS_MAIN(TestStretch)
#include "tst_stretch.moc"
