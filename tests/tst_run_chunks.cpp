// A run file's chunks (the fold of every 64 steps, what a long run opens from): each equals its
// steps folded live, a recorded run plays them and then the last chunk's steps, and an unfinished
// run's summary comes out the same from chunks as from every step.
#include "record_compare.h"
#include "run_collector.h"
#include "run_file_helpers.h"

#include "nanscope/recorded_run.h"
#include "nanscope/run_file.h"
#include "nanscope/run_recorder.h"
#include "nanscope/session.h"

#include <sqlite3.h>

#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <climits>
#include <map>

using namespace nanscope;
using namespace nanscope::testing;

namespace {

QString diffBucket(const char *what, const SeriesBucket &a, const SeriesBucket &b)
{
    if (a.firstStep != b.firstStep || a.lastStep != b.lastStep || a.count != b.count ||
        a.finiteCount != b.finiteCount || (a.finiteCount > 0 && (!same(a.min, b.min) || !same(a.max, b.max))) ||
        a.firstNonFiniteStep != b.firstNonFiniteStep ||
        (a.hasNonFinite() && !same(a.firstNonFiniteValue, b.firstNonFiniteValue)))
        return QString("%1: steps %2-%3 count %4 finite %5 min %6 max %7 first non-finite %8 (%9); read %10-%11 %12 "
                       "%13 %14 %15 %16 (%17)")
            .arg(what)
            .arg(a.firstStep)
            .arg(a.lastStep)
            .arg(a.count)
            .arg(a.finiteCount)
            .arg(a.min)
            .arg(a.max)
            .arg(a.firstNonFiniteStep)
            .arg(a.firstNonFiniteValue)
            .arg(b.firstStep)
            .arg(b.lastStep)
            .arg(b.count)
            .arg(b.finiteCount)
            .arg(b.min)
            .arg(b.max)
            .arg(b.firstNonFiniteStep)
            .arg(b.firstNonFiniteValue);
    return {};
}

QString diffChunk(const StepChunk &a, const StepChunk &b)
{
    const QString at = QString("chunk %1: ").arg(a.index);
    if (a.index != b.index || a.firstStep != b.firstStep || a.lastStep != b.lastStep || a.tally.steps != b.tally.steps)
        return at + QString("covers %1-%2 (%3 steps), read %4 %5-%6 (%7)")
                        .arg(a.firstStep)
                        .arg(a.lastStep)
                        .arg(a.tally.steps)
                        .arg(b.index)
                        .arg(b.firstStep)
                        .arg(b.lastStep)
                        .arg(b.tally.steps);
    for (int s = 0; s < kSeriesCount; ++s)
        if (QString d = diffBucket(seriesName(Series(s)), a.series[std::size_t(s)], b.series[std::size_t(s)]);
            !d.isEmpty())
            return at + d;
    if (QString d = diffBucket("skipped", a.skipped, b.skipped); !d.isEmpty())
        return at + d;
    if (QString d = diffOrigin(a.tally.firstOrigin, b.tally.firstOrigin); !d.isEmpty())
        return at + "first origin: " + d;
    const StepTally &ta = a.tally, &tb = b.tally;
    if (ta.nonFiniteSteps != tb.nonFiniteSteps || ta.rollbacks != tb.rollbacks ||
        ta.scalerSkippedSteps != tb.scalerSkippedSteps || ta.skippedSteps != tb.skippedSteps ||
        !same(ta.stepMillis, tb.stepMillis) || ta.quarantined != tb.quarantined ||
        ta.nonFiniteStepsPerLayer != tb.nonFiniteStepsPerLayer)
        return at + QString("counts: non-finite %1/%2 rollbacks %3/%4 scaler %5/%6 ms %7/%8 quarantined %9/%10")
                        .arg(ta.nonFiniteSteps)
                        .arg(tb.nonFiniteSteps)
                        .arg(ta.rollbacks)
                        .arg(tb.rollbacks)
                        .arg(ta.scalerSkippedSteps)
                        .arg(tb.scalerSkippedSteps)
                        .arg(ta.stepMillis)
                        .arg(tb.stepMillis)
                        .arg(ta.quarantined.size())
                        .arg(tb.quarantined.size());
    if (a.layers.size() != b.layers.size())
        return at + "layer count";
    for (std::size_t l = 0; l < a.layers.size(); ++l) {
        const StepChunk::LayerPart &x = a.layers[l], &y = b.layers[l];
        if (x.firstNonFinite != y.firstNonFinite || x.firstProduced != y.firstProduced)
            return at + QString("layer %1: first non-finite %2/%3, produced %4/%5")
                            .arg(l)
                            .arg(x.firstNonFinite)
                            .arg(y.firstNonFinite)
                            .arg(x.firstProduced)
                            .arg(y.firstProduced);
        if (!same(x.updateRatio, y.updateRatio))
            return at + QString("layer %1: update ratio %2/%3").arg(l).arg(x.updateRatio).arg(y.updateRatio);
        for (int k = 0; k < kLayerHealthKinds; ++k) {
            const MapCell &c = x.cells[std::size_t(k)], &d = y.cells[std::size_t(k)];
            if (c.present != d.present || c.step != d.step || c.numel != d.numel || c.nan != d.nan ||
                c.posInf != d.posInf || c.negInf != d.negInf || !same(c.absMax, d.absMax) || !same(c.norm, d.norm))
                return at + QString("layer %1 kind %2: step %3/%4 numel %5/%6 non-finite %7/%8 absmax %9/%10")
                                .arg(l)
                                .arg(k)
                                .arg(c.step)
                                .arg(d.step)
                                .arg(c.numel)
                                .arg(d.numel)
                                .arg(c.nonFinite())
                                .arg(d.nonFinite())
                                .arg(c.absMax, 0, 'g', 17)
                                .arg(d.absMax, 0, 'g', 17);
        }
    }
    return {};
}

// The live records folded as the recorder folds them.
std::vector<StepChunk> foldLive(const RunCollector &live)
{
    std::vector<StepChunk> out;
    for (const StepRecordPtr &r : live.records) {
        if (out.empty() || out.back().index != chunkOfStep(r->step))
            out.emplace_back(chunkOfStep(r->step), live.layers.size());
        out.back().add(*r);
    }
    return out;
}

std::unique_ptr<RunCollector> play(const QString &path, int chunkedAbove, int coarseAbove = RecordedRunOptions{}.coarseAbove)
{
    auto c = std::make_unique<RunCollector>();
    RecordedRunOptions options;
    options.follow = false;
    options.chunkedAbove = chunkedAbove;
    options.coarseAbove = coarseAbove;
    RecordedRun run(path.toStdString(), options);
    run.addObserver(c.get());
    run.start();
    run.wait(60000);
    run.removeObserver(c.get());
    return c;
}

}  // namespace

class TestRunChunks : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY(dir_.isValid()); }
    void chunksAreTheirStepsFolded_data();
    void chunksAreTheirStepsFolded();
    void playerHandsOverChunksThenSteps();
    void coarseChunksAreTheirChunksFolded();
    void unfinishedRunSummarizesTheSameFromChunks();
    void fileWithoutChunkTablesPlaysStepByStep();

private:
    QString file(const QString &name) const { return dir_.filePath(name); }
    QTemporaryDir dir_;
};

void TestRunChunks::chunksAreTheirStepsFolded_data()
{
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<int>("steps");
    // What the chunks must hold, so the comparison has work: 1 some, 0 none, -1 either.
    QTest::addColumn<int>("nonFinite");
    QTest::addColumn<int>("skipped");
    QTest::addColumn<int>("quarantined");
    QTest::newRow("diverging") << "large-lr-mse" << 200 << 1 << 0 << 0;
    QTest::newRow("loss scaling") << "fp16-overflow" << 150 << -1 << 1 << 0;
    QTest::newRow("non-finite inputs") << "nan-input" << 140 << 1 << 0 << 0;
    QTest::newRow("quarantined samples") << "safe-training" << 192 << -1 << 0 << 1;  // whole chunks only
}

void TestRunChunks::chunksAreTheirStepsFolded()
{
    QFETCH(QString, scenario);
    QFETCH(int, steps);
    QFETCH(int, nonFinite);
    QFETCH(int, skipped);
    QFETCH(int, quarantined);
    RunConfig config;
    config.scenario = scenario.toStdString();
    config.steps = steps;
    const QString path = file(scenario + ".nsrun");
    const auto live = recordRun(config, path.toStdString());
    QVERIFY2(live->summary.error.empty(), live->summary.error.c_str());
    const std::vector<StepChunk> expected = foldLive(*live);
    QCOMPARE(int(expected.size()), (steps + kChunkSteps - 1) / kChunkSteps);
    RunFile f(path.toStdString());
    const std::vector<StepChunkPtr> read = f.readChunks(-1, INT_MAX, 1000);
    QCOMPARE(read.size(), expected.size());  // the last, short one too: written when the run finished
    int nonFiniteSteps = 0, skippedSteps = 0, quarantinedSamples = 0;
    for (std::size_t i = 0; i < read.size(); ++i) {
        const QString d = diffChunk(expected[i], *read[i]);
        QVERIFY2(d.isEmpty(), qPrintable(d));
        nonFiniteSteps += read[i]->tally.nonFiniteSteps;
        skippedSteps += read[i]->skipped.count;
        quarantinedSamples += int(read[i]->tally.quarantined.size());
    }
    // The chunks' sums against a count of the records themselves, not the recorder's tally.
    int recordsNonFinite = 0, recordsSkipped = 0, recordsQuarantined = 0;
    for (const StepRecordPtr &r : live->records) {
        recordsNonFinite += r->origin.phase != Phase::None ? 1 : 0;
        recordsSkipped += r->skipped ? 1 : 0;
        recordsQuarantined += int(r->quarantined.size());
    }
    QCOMPARE(nonFiniteSteps, recordsNonFinite);
    QCOMPARE(skippedSteps, recordsSkipped);
    QCOMPARE(quarantinedSamples, recordsQuarantined);
    QCOMPARE(nonFiniteSteps, live->summary.nonFiniteSteps);
    QCOMPARE(skippedSteps, live->summary.skippedSteps);
    if (nonFinite >= 0)
        QCOMPARE(nonFiniteSteps > 0, nonFinite == 1);
    QCOMPARE(skippedSteps > 0, skipped == 1);
    QCOMPARE(quarantinedSamples > 0, quarantined == 1);
    // Bounded reads: after and before exclude, the count limits.
    const auto middle = f.readChunks(0, 2, 10);
    QCOMPARE(int(middle.size()), 1);
    QCOMPARE(middle[0]->index, 1);
    QCOMPARE(int(f.readChunks(-1, INT_MAX, 2).size()), 2);
}

void TestRunChunks::playerHandsOverChunksThenSteps()
{
    RunConfig config;
    config.scenario = "large-lr-mse";
    config.steps = 200;
    const QString path = file("played.nsrun");
    const auto live = recordRun(config, path.toStdString());
    const auto chunked = play(path, 0);
    const auto stepwise = play(path, -1);
    // Chunks 0..2 (steps 0..191), then the last chunk's steps one by one.
    QCOMPARE(int(chunked->chunks.size()), 3);
    QCOMPARE(chunked->chunks.back()->lastStep, 191);
    QCOMPARE(int(chunked->records.size()), 8);
    QCOMPARE(chunked->records.front()->step, 192);
    QVERIFY(diffRecord(*live->records.back(), *chunked->records.back()).isEmpty());
    QCOMPARE(int(stepwise->chunks.size()), 0);
    QCOMPARE(stepwise->records.size(), live->records.size());
    // Every event arrives either way.
    QCOMPARE(chunked->events.size(), live->events.size());
    QVERIFY(!chunked->events.empty());
    const QString d = diffSummary(stepwise->summary, chunked->summary);
    QVERIFY2(d.isEmpty(), qPrintable(d));
    // Below the threshold a file plays step by step.
    QCOMPARE(int(play(path, 500)->chunks.size()), 0);
}

// Healthy until a NaN sample at step 1500, non-finite after: each coarse chunk (1,024 steps) is
// its 16 chunks folded, and a player told to start coarse hands over the complete coarse chunks,
// then the chunks after them, then the last chunk's steps, and sums up the same.
void TestRunChunks::coarseChunksAreTheirChunksFolded()
{
    RunConfig config;
    config.scenario = "large-lr-mse";
    config.steps = 2500;
    config.nanSample.step = 1500;
    Controls c = initialControls(config);
    c.learningRate = 0.01;
    config.controls = c;
    const QString path = file("coarse.nsrun");
    const auto live = recordRun(config, path.toStdString());
    QVERIFY2(live->summary.error.empty(), live->summary.error.c_str());
    QCOMPARE(live->summary.firstNonFiniteStep, 1500);
    RunFile f(path.toStdString());
    const std::vector<StepChunkPtr> chunks = f.readChunks(-1, INT_MAX, 1000);
    const std::vector<StepChunkPtr> coarse = f.readCoarseChunks(-1, INT_MAX, 100);
    QCOMPARE(int(coarse.size()), 3);  // 0..1023, 1024..2047, 2048..2499 (written when the run ended)
    for (const StepChunkPtr &g : coarse) {
        StepChunk expected(g->index, live->layers.size());
        for (const StepChunkPtr &ch : chunks)
            if (ch->index / kCoarseChunkChunks == g->index)
                expected.fold(*ch);
        const QString d = diffChunk(expected, *g);
        QVERIFY2(d.isEmpty(), qPrintable(d));
    }
    QCOMPARE(coarse[1]->firstStep, 1024);
    QCOMPARE(coarse[1]->tally.firstOrigin.step, 1500);
    QCOMPARE(coarse[2]->lastStep, 2499);
    // Folding chunks is folding their steps: the first coarse chunk against the live records.
    StepChunk first(0, live->layers.size());
    for (const StepRecordPtr &r : live->records)
        if (r->step < kCoarseChunkSteps)
            first.add(*r);
    QVERIFY(qFuzzyCompare(first.tally.stepMillis, coarse[0]->tally.stepMillis));  // summed in another order
    first.tally.stepMillis = coarse[0]->tally.stepMillis;
    QVERIFY2(diffChunk(first, *coarse[0]).isEmpty(), qPrintable(diffChunk(first, *coarse[0])));

    const auto played = play(path, 0, 0);
    // Coarse chunks 0 and 1 (the newest step's group, 2, is not complete), chunks 32..38, then
    // the steps of chunk 39 (2496..2499).
    QCOMPARE(int(played->chunks.size()), 2 + 7);
    QCOMPARE(played->chunks[1]->lastStep, 2047);
    QCOMPARE(played->chunks[2]->firstStep, 2048);
    QCOMPARE(int(played->records.size()), 4);
    QCOMPARE(played->records.front()->step, 2496);
    const QString d = diffSummary(play(path, -1)->summary, played->summary);
    QVERIFY2(d.isEmpty(), qPrintable(d));
}

// A run whose recorder went away mid-run: no summary in the file, so the player builds one.
void TestRunChunks::unfinishedRunSummarizesTheSameFromChunks()
{
    const QString path = file("unfinished.nsrun");
    RunConfig config;
    config.scenario = "fp16-overflow";
    config.steps = 600;
    RunCollector live;
    Session session;
    auto recorder = std::make_unique<RunRecorder>(path.toStdString());
    session.addObserver(&live);
    session.addObserver(recorder.get());
    QVERIFY(session.start(config));
    for (int i = 0; i < 3000; ++i) {
        {
            std::lock_guard<std::mutex> lock(live.mutex);
            if (live.records.size() >= 300)
                break;
        }
        QThread::msleep(5);
    }
    session.removeObserver(recorder.get());
    recorder->close();
    session.wait(60000);
    session.removeObserver(&live);

    const auto chunked = play(path, 0);
    const auto stepwise = play(path, -1);
    QVERIFY(!chunked->summary.finished);
    QVERIFY(chunked->summary.stepsRun >= 300);
    QVERIFY(chunked->chunks.size() >= 4);
    const QString d = diffSummary(stepwise->summary, chunked->summary);
    QVERIFY2(d.isEmpty(), qPrintable(d));
    QVERIFY(chunked->summary.scalerSkippedSteps > 0);  // the chunks carried something to add
}

// Files written before chunks existed have none: they open step by step, as before.
void TestRunChunks::fileWithoutChunkTablesPlaysStepByStep()
{
    RunConfig config;
    config.scenario = "large-lr-mse";
    config.steps = 200;
    const QString path = file("old.nsrun");
    const auto live = recordRun(config, path.toStdString());
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
    QCOMPARE(sqlite3_exec(db, "DROP TABLE chunk_layers; DROP TABLE chunk_series; DROP TABLE chunks;", nullptr, nullptr,
                          nullptr),
             SQLITE_OK);
    sqlite3_close(db);
    QVERIFY(RunFile(path.toStdString()).readChunks(-1, INT_MAX, 100).empty());
    const auto played = play(path, 0);
    QVERIFY(played->chunks.empty());
    QCOMPARE(played->records.size(), live->records.size());
    QVERIFY(played->summary.finished);
}

QTEST_GUILESS_MAIN(TestRunChunks)
#include "tst_run_chunks.moc"
