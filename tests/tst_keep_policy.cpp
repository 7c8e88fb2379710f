// What a run file keeps of each layer's health (docs/run-file.md, "Layer detail"): every
// non-finite step and its lead-up in full, the first steps, around control changes and warnings,
// a sample of the rest; a budget thins the samples only; `--keep all` keeps every row; reports of
// a thinned file agree with the unthinned one.
#include "cli_runner.h"
#include "record_compare.h"
#include "run_collector.h"
#include "run_file_helpers.h"
#include "sql_helpers.h"
#include "synthetic_run.h"

#include "nanscope/layer_detail_retention.h"
#include "nanscope/recorded_run.h"
#include "nanscope/run_file.h"
#include "nanscope/run_recorder.h"
#include "nanscope/synthetic_records.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <set>

using namespace nanscope;
using namespace nanscope::testing;

Q_DECLARE_METATYPE(std::set<int>)

namespace {

// The policy as docs/run-file.md words it, step by step, independent of the ring that implements it.
bool expectedKept(int s, const Plan &p)
{
    if (s < KeepPolicy::kFirstSteps || s % KeepPolicy::kSampleEvery == 0)
        return true;
    for (int x : p.nonFinite)
        if (s <= x && s >= x - KeepPolicy::kLeadUpSteps)
            return true;
    for (int x : p.warnings)
        if (s <= x && s >= x - KeepPolicy::kLeadUpSteps)
            return true;
    for (int c : p.controls)
        if (s >= c - KeepPolicy::kLeadUpSteps && s < c + KeepPolicy::kAfterControlSteps)
            return true;
    return false;
}

}  // namespace

class TestKeepPolicy : public QObject {
    Q_OBJECT
private slots:
    void parsesPolicies_data();
    void parsesPolicies();
    void retentionFollowsThePolicy_data();
    void retentionFollowsThePolicy();
    void fileKeepsNonFiniteStepsAndLeadUps();
    void keepAllKeepsEveryRow();
    void budgetThinsSamplesOnly();
    void reportsOfAThinnedFileAgree();
    void playedThinnedStepsShowTheirChunk();
    void aFileBeingWrittenHoldsItsFillingChunk();
    void aCapsuleKeepsItsStep();

private:
    QString file(const QString &name) const { return dir_.filePath(name); }
    QTemporaryDir dir_;
};

void TestKeepPolicy::parsesPolicies_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<bool>("all");
    QTest::addColumn<qint64>("budget");
    QTest::addColumn<QString>("name");
    const qint64 MiB = 1 << 20, GiB = qint64(1) << 30;
    QTest::newRow("all") << "all" << true << true << qint64(0) << "all";
    QTest::newRow("auto") << "auto" << true << false << 1536 * MiB << "auto";
    QTest::newRow("AUTO") << "AUTO" << true << false << 1536 * MiB << "auto";
    QTest::newRow("2GiB") << "2GiB" << true << false << 2 * GiB << "2GiB";
    QTest::newRow("2gb") << "2gb" << true << false << 2 * GiB << "2GiB";
    QTest::newRow("1.5G") << "1.5G" << true << false << 1536 * MiB << "auto";
    QTest::newRow("500MiB") << "500MiB" << true << false << 500 * MiB << "500MiB";
    QTest::newRow("800MB") << "800MB" << true << false << 800 * MiB << "800MiB";
    QTest::newRow("bytes") << "3145728" << true << false << 3 * MiB << "3MiB";
    QTest::newRow("empty") << "" << false << false << qint64(0) << "";
    QTest::newRow("zero") << "0" << false << false << qint64(0) << "";
    QTest::newRow("negative") << "-1GiB" << false << false << qint64(0) << "";
    QTest::newRow("under 1 MiB") << "512KiB" << false << false << qint64(0) << "";
    QTest::newRow("unknown unit") << "2 parsecs" << false << false << qint64(0) << "";
    QTest::newRow("words") << "everything" << false << false << qint64(0) << "";
}

void TestKeepPolicy::parsesPolicies()
{
    QFETCH(QString, text);
    QFETCH(bool, valid);
    QFETCH(bool, all);
    QFETCH(qint64, budget);
    QFETCH(QString, name);
    const std::optional<KeepPolicy> p = parseKeepPolicy(text.toStdString());
    QCOMPARE(p.has_value(), valid);
    if (!valid)
        return;
    QCOMPARE(p->keepAll, all);
    if (!all)
        QCOMPARE(qint64(p->budgetBytes), budget);
    QCOMPARE(QString::fromStdString(keepPolicyName(*p)), name);
    const std::optional<KeepPolicy> again = parseKeepPolicy(keepPolicyName(*p));  // the name reads back
    QVERIFY(again && again->keepAll == p->keepAll && again->budgetBytes == p->budgetBytes);
}

void TestKeepPolicy::retentionFollowsThePolicy_data()
{
    QTest::addColumn<int>("steps");
    QTest::addColumn<std::set<int>>("nonFinite");
    QTest::addColumn<std::set<int>>("warnings");
    QTest::addColumn<std::set<int>>("controls");
    QTest::newRow("healthy") << 3000 << std::set<int>{} << std::set<int>{} << std::set<int>{};
    QTest::newRow("scattered NaN") << 4000 << std::set<int>{1500, 1510, 2222, 3001, 3999} << std::set<int>{}
                                   << std::set<int>{};
    QTest::newRow("NaN just after the first steps") << 2000 << std::set<int>{1030} << std::set<int>{}
                                                    << std::set<int>{};
    QTest::newRow("a NaN stretch") << 3000 << std::set<int>{2100, 2101, 2102, 2103, 2104} << std::set<int>{}
                                   << std::set<int>{};
    QTest::newRow("warnings") << 3000 << std::set<int>{} << std::set<int>{1801, 2555} << std::set<int>{};
    QTest::newRow("control changes") << 3000 << std::set<int>{} << std::set<int>{} << std::set<int>{2001, 2050, 2900};
    QTest::newRow("everything") << 5000 << std::set<int>{1333, 4200} << std::set<int>{1300, 2999}
                                << std::set<int>{1350, 4150};
}

void TestKeepPolicy::retentionFollowsThePolicy()
{
    QFETCH(int, steps);
    QFETCH(std::set<int>, nonFinite);
    QFETCH(std::set<int>, warnings);
    QFETCH(std::set<int>, controls);
    const Plan p{steps, nonFinite, warnings, controls};
    LayerDetailRetention retention;
    std::map<int, LayerDetail> detail;  // the last word on each step
    const auto take = [&](const std::vector<LayerDetailRetention::Decision> &decisions) {
        for (const auto &d : decisions)
            detail[d.record->step] = d.detail;
    };
    play(
        p, 4, [&](const StepRecordPtr &r) { take(retention.step(r)); },
        [&](EventKind kind, int step) { take(retention.event(kind, step)); });
    QCOMPARE(int(detail.size()), steps);
    int kept = 0;
    for (int s = 0; s < steps; ++s) {
        const bool isKept = detail[s] != LayerDetail::None;
        kept += isKept;
        if (isKept != expectedKept(s, p))
            QFAIL(qPrintable(QString("step %1: %2, expected %3")
                                 .arg(s)
                                 .arg(layerDetailId(detail[s]))
                                 .arg(expectedKept(s, p) ? "kept" : "none")));
    }
    for (int s : nonFinite)
        QCOMPARE(detail[s], LayerDetail::NonFinite);
    if (nonFinite.empty() && warnings.empty() && controls.empty())  // the first 1,024 and every 16th
        QCOMPARE(kept, KeepPolicy::kFirstSteps +
                           (steps - KeepPolicy::kFirstSteps + KeepPolicy::kSampleEvery - 1) / KeepPolicy::kSampleEvery);
}

// Through the recorder: every step's row, the layer rows exactly where the policy keeps them,
// and chunks for every step.
void TestKeepPolicy::fileKeepsNonFiniteStepsAndLeadUps()
{
    const Plan p = plan(5000, {1500, 2222, 2223, 4321}, {3000}, {3500});
    const int layers = 8;
    const QString path = file("auto.nsrun");
    record(path, p, layers, KeepPolicy{});
    RunFile f(path.toStdString());
    QCOMPARE(f.info().formatVersion, kRunFileFormatVersion);
    QVERIFY(!f.info().keep.keepAll);
    QCOMPARE(f.info().keepSampleEvery, KeepPolicy::kSampleEvery);
    const auto read = readAll(f);
    QCOMPARE(int(read.size()), p.steps);
    int withLayers = 0;
    for (const StepRecordPtr &r : read) {
        const bool kept = expectedKept(r->step, p);
        QCOMPARE(r->layerDetail != LayerDetail::None, kept);
        QCOMPARE(int(r->layers.size()), kept ? layers : 0);
        withLayers += kept;
        if (kept) {  // every layer row as recorded
            const QString d = diffRecord(*syntheticStepRecord(0, r->step, layers, p.nonFinite.count(r->step) > 0), *r);
            QVERIFY2(d.isEmpty(), qPrintable(d));
        }
    }
    for (int s : p.nonFinite) {
        QCOMPARE(read[std::size_t(s)]->layerDetail, LayerDetail::NonFinite);
        QCOMPARE(read[std::size_t(s)]->layers[5].forward.nan, std::int64_t(64 * 3));
        for (int before = s - KeepPolicy::kLeadUpSteps; before < s; ++before)
            QVERIFY2(read[std::size_t(before)]->layers.size() == std::size_t(layers), qPrintable(QString::number(before)));
    }
    QCOMPARE(read[3000]->layerDetail, LayerDetail::Warning);
    QCOMPARE(read[2999]->layerDetail, LayerDetail::LeadUp);
    QCOMPARE(read[3563]->layerDetail, LayerDetail::Control);
    QCOMPARE(read[3565]->layerDetail, LayerDetail::None);
    QVERIFY(withLayers < p.steps / 2);
    // The chunks cover every step: each layer's largest magnitude over its 64 steps.
    const auto chunks = f.readChunks(-1, 1 << 30, 1000);
    QCOMPARE(int(chunks.size()), (p.steps + kChunkSteps - 1) / kChunkSteps);
    const StepChunkPtr &c = chunks[40];  // steps 2560..2623: thinned but for every 16th
    QCOMPARE(c->tally.steps, kChunkSteps);
    const double largest = syntheticStepRecord(0, c->lastStep, layers, false)->layers[7].forward.absMax;
    QCOMPARE(c->layers[7].cells[0].absMax, largest);
}

void TestKeepPolicy::keepAllKeepsEveryRow()
{
    const Plan p = plan(3000, {2500});
    const QString all = file("all.nsrun"), thinned = file("thinned.nsrun");
    record(all, p, 6, KeepPolicy::all());
    record(thinned, p, 6, KeepPolicy{});
    QCOMPARE(sqlNumber(all, "SELECT count(*) FROM layer_steps"), std::int64_t(3000 * 6));
    QCOMPARE(sqlNumber(all, "SELECT count(*) FROM steps WHERE layer_detail IS NOT NULL"), std::int64_t(0));
    RunFile a(all.toStdString()), t(thinned.toStdString());
    QVERIFY(a.info().keep.keepAll);
    const auto everyStep = readAll(a), someSteps = readAll(t);
    QCOMPARE(everyStep.size(), someSteps.size());
    for (std::size_t i = 0; i < everyStep.size(); ++i) {
        QCOMPARE(everyStep[i]->layerDetail, LayerDetail::Every);
        if (someSteps[i]->layerDetail == LayerDetail::None)
            continue;
        StepRecord expected = *everyStep[i];
        expected.layerDetail = someSteps[i]->layerDetail;
        const QString d = diffRecord(expected, *someSteps[i]);
        QVERIFY2(d.isEmpty(), qPrintable(d));
    }
    // The same layer_nonfinite and chunk tables, row for row.
    for (const char *sql : {"SELECT count(*) FROM layer_nonfinite", "SELECT sum(nan) FROM layer_nonfinite",
                            "SELECT count(*) FROM chunk_layers", "SELECT sum(forward_absmax) FROM chunk_layers",
                            "SELECT sum(nonfinite_steps) FROM chunk_layers"})
        QCOMPARE(sqlNumber(thinned, sql), sqlNumber(all, sql));
}

void TestKeepPolicy::budgetThinsSamplesOnly()
{
    // 20 layers: the first steps, the lead-ups, the steps' rows and the chunks take about 10 MB,
    // every 16th step as many again; a budget of 12 MiB leaves room for some samples only.
    const Plan p = plan(40000, {7777, 30000});
    const int layers = 20;
    const qint64 budget = 12 << 20;
    const QString path = file("budget.nsrun"), unbounded = file("unbounded.nsrun");
    record(path, p, layers, *parseKeepPolicy("12MiB"));
    record(unbounded, p, layers, KeepPolicy{});
    QVERIFY2(QFileInfo(unbounded).size() > budget * 5 / 4, qPrintable(QString::number(QFileInfo(unbounded).size())));
    // Checked once a chunk: over by at most what a chunk of steps adds.
    const qint64 size = QFileInfo(path).size();
    QVERIFY2(size <= budget + budget / 20, qPrintable(QString("%1 bytes").arg(size)));
    RunFile f(path.toStdString());
    QCOMPARE(f.info().keep.budgetBytes, std::int64_t(budget));
    const int every = f.info().keepSampleEvery;
    QVERIFY2(every > KeepPolicy::kSampleEvery && every < 4096, qPrintable(QString::number(every)));
    QVERIFY(sqlNumber(path, "SELECT count(*) FROM steps WHERE layer_detail = 'sample'") > 0);
    for (int s : p.nonFinite)  // never thinned: the step and its lead-up
        QCOMPARE(sqlNumber(path, QString("SELECT count(*) FROM layer_steps WHERE key BETWEEN %1 AND %2")
                                     .arg((s - KeepPolicy::kLeadUpSteps) * layers)
                                     .arg(s * layers + layers - 1)),
                 std::int64_t((KeepPolicy::kLeadUpSteps + 1) * layers));
    QCOMPARE(sqlNumber(path, "SELECT count(*) FROM steps WHERE layer_detail = 'first'"),
             std::int64_t(KeepPolicy::kFirstSteps));
    // What is left of the samples is on the final stride, and each has all its rows.
    QCOMPARE(sqlNumber(path, QString("SELECT count(*) FROM steps WHERE layer_detail = 'sample' AND step % %1 != 0")
                                 .arg(every)),
             std::int64_t(0));
    QCOMPARE(sqlNumber(path, "SELECT count(*) FROM layer_steps"),
             sqlNumber(path, "SELECT count(*) FROM steps WHERE layer_detail != 'none'") * layers);
    QCOMPARE(sqlNumber(path, "SELECT count(*) FROM steps"), std::int64_t(p.steps));
    QCOMPARE(sqlNumber(path, "SELECT count(*) FROM chunks"), std::int64_t((p.steps + kChunkSteps - 1) / kChunkSteps));
}

// A scenario run recorded both ways: report --json says the same of both, finished or cut short.
void TestKeepPolicy::reportsOfAThinnedFileAgree()
{
    // Healthy until a NaN sample at step 1500, non-finite from there on.
    const QString all = file("nan-sample-all.nsrun"), thinned = file("nan-sample-auto.nsrun");
    for (const auto &[path, keep] : {std::pair{all, QString("all")}, std::pair{thinned, QString("auto")}}) {
        const Output o = nanscope::testing::run(
            {"run", "--scenario", "large-lr-mse", "--lr", "0.01", "--inject", "nan-sample@1500", "--recovery", "none",
             "--steps", "2600", "--record", path, "--keep", keep, "--json"});
        QVERIFY2(o.code == 0, qPrintable(o.err));
    }
    QVERIFY(sqlNumber(thinned, "SELECT count(*) FROM steps WHERE layer_detail = 'none'") > 300);
    QCOMPARE(sqlNumber(thinned, "SELECT min(step) FROM steps WHERE layer_detail = 'nonfinite'"), std::int64_t(1500));
    QCOMPARE(sqlNumber(thinned, "SELECT count(*) FROM steps WHERE step BETWEEN 1436 AND 1499 AND layer_detail = 'none'"),
             std::int64_t(0));
    const auto summaryOf = [](const QString &path) {
        const Output o = nanscope::testing::run({"report", path, "--json"});
        for (QJsonObject line : o.objects)
            if (line.value("type") == "summary") {
                line.remove("steps_per_second");
                return line;
            }
        return QJsonObject();
    };
    QVERIFY(!summaryOf(all).isEmpty());
    QCOMPARE(summaryOf(thinned), summaryOf(all));
    // Cut short: the summary rebuilt from the steps.
    for (const QString &path : {all, thinned})
        QCOMPARE(execSql(path, "UPDATE run SET summary = NULL, finished = NULL"), QString());
    const QJsonObject rebuilt = summaryOf(thinned);
    QCOMPARE(rebuilt.value("finished").toBool(true), false);
    QVERIFY(rebuilt.value("nonfinite_steps").toInt() > 0);
    QCOMPARE(rebuilt, summaryOf(all));
}

// Played as the window plays a file: a thinned step comes with its chunk's layers (finite, each
// kind's largest magnitude over the chunk), a kept step with its own.
void TestKeepPolicy::playedThinnedStepsShowTheirChunk()
{
    const Plan p = plan(2000, {1600});
    const int layers = 5;
    const QString path = file("played.nsrun");
    record(path, p, layers, KeepPolicy{});
    RunCollector c;
    RecordedRunOptions options;
    options.follow = false;
    RecordedRun run(path.toStdString(), options);
    run.addObserver(&c);
    run.start();
    QVERIFY(run.wait(60000));
    run.removeObserver(&c);
    QCOMPARE(int(c.records.size()), p.steps);
    const StepRecord &thinned = *c.records[1100];  // chunk 17: steps 1088..1151
    QCOMPARE(thinned.layerDetail, LayerDetail::None);
    QCOMPARE(int(thinned.layers.size()), layers);
    const StepRecordPtr chunkLast = syntheticStepRecord(0, 1151, layers, false);
    for (int l = 0; l < layers; ++l) {
        const LayerHealth &lh = thinned.layers[std::size_t(l)];
        QVERIFY(lh.forward.present && !lh.nonFinite());
        QCOMPARE(lh.forward.absMax, chunkLast->layers[std::size_t(l)].forward.absMax);  // values grow with the step
        QCOMPARE(lh.forward.numel, std::int64_t(2048));
        QCOMPARE(lh.updateRatio, chunkLast->layers[std::size_t(l)].updateRatio);
    }
    const StepRecord &sampled = *c.records[1104];
    QCOMPARE(sampled.layerDetail, LayerDetail::Sample);
    QCOMPARE(sampled.layers[2].forward.absMax, syntheticStepRecord(0, 1104, layers, false)->layers[2].forward.absMax);
    QCOMPARE(c.records[1600]->layers[4].forward.nan, std::int64_t(128));
}

// A file still being written holds the chunk being filled, with the steps committed so far: a
// follower reads a thinned step (written at once, its layers decided 64 steps later) with its
// chunk's layers at once, not with none.
void TestKeepPolicy::aFileBeingWrittenHoldsItsFillingChunk()
{
    const int layers = 4;
    const QString path = file("filling.nsrun");
    RunRecorder recorder(path.toStdString());
    RunConfig config;
    config.scenario = "synthetic";
    config.steps = 2000;
    recorder.runStarted(0, syntheticLayers(layers), config);
    const auto writeUpTo = [&](int from, int to) {
        for (int s = from; s <= to; ++s)
            recorder.stepRecorded(syntheticStepRecord(0, s, layers, false));
        recorder.flush();
    };
    writeUpTo(0, 1099);
    const RunFile f(path.toStdString());
    std::vector<StepRecordPtr> steps = f.readSteps(1098, 1);
    QCOMPARE(int(steps.size()), 1);
    QCOMPARE(steps[0]->layerDetail, LayerDetail::None);
    StepChunkPtr cache;
    const StepRecordPtr filled = withChunkLayers(f, steps[0], &cache);
    QCOMPARE(int(filled->layers.size()), layers);
    // Values grow with the step: the chunk's largest so far is step 1099's.
    QCOMPARE(filled->layers[1].forward.absMax, syntheticStepRecord(0, 1099, layers, false)->layers[1].forward.absMax);
    std::vector<StepChunkPtr> chunks = f.readChunks(16, 18, 2);  // 17: steps 1088..1151
    QCOMPARE(int(chunks.size()), 1);
    QCOMPARE(chunks[0]->lastStep, 1099);
    QCOMPARE(chunks[0]->tally.steps, 12);

    writeUpTo(1100, 1120);  // the chunk grows; a cached copy that ends before a step is read again
    steps = f.readSteps(1118, 1);
    QCOMPARE(steps[0]->layerDetail, LayerDetail::None);
    QCOMPARE(withChunkLayers(f, steps[0], &cache)->layers[1].forward.absMax,
             syntheticStepRecord(0, 1120, layers, false)->layers[1].forward.absMax);
    QCOMPARE(cache->lastStep, 1120);

    // A follower (the window's player) gets the newest thinned steps with their chunk's layers.
    RunCollector c;
    RecordedRunOptions follow;
    follow.pollMs = 20;
    RecordedRun run(path.toStdString(), follow);
    run.addObserver(&c);
    run.start();
    const auto received = [&c] {
        std::lock_guard<std::mutex> lock(c.mutex);
        return int(c.records.size());
    };
    QTRY_COMPARE_WITH_TIMEOUT(received(), 1121, 20000);
    writeUpTo(1121, 1130);
    QTRY_COMPARE_WITH_TIMEOUT(received(), 1131, 20000);
    RunSummary summary;
    summary.stepsRun = 1131;
    summary.finished = true;
    recorder.runFinished(summary);
    recorder.close();
    QVERIFY(run.wait(20000));
    run.removeObserver(&c);
    for (int s : {1099, 1121, 1125, 1130}) {
        QCOMPARE(c.records[std::size_t(s)]->layerDetail, LayerDetail::None);
        QCOMPARE(int(c.records[std::size_t(s)]->layers.size()), layers);
    }
}

// A capsule asked for a healthy step past the first 1,024: the step keeps its layers (replay
// compares with them) and replays as reproduced; its neighbours are thinned.
void TestKeepPolicy::aCapsuleKeepsItsStep()
{
    const QString path = file("capsule.nsrun");
    const Output o = nanscope::testing::run({"run", "--scenario", "large-lr-mse", "--lr", "0.01", "--steps", "1400",
                                             "--capsule-at", "1301", "--record", path});
    QVERIFY2(o.code == 0, qPrintable(o.err));
    QCOMPARE(sqlNumber(path, "SELECT count(*) FROM steps WHERE step = 1301 AND layer_detail = 'capsule'"),
             std::int64_t(1));
    QCOMPARE(sqlNumber(path, "SELECT count(*) FROM steps WHERE step IN (1299, 1300, 1302) AND layer_detail = 'none'"),
             std::int64_t(3));
    const Output replay = nanscope::testing::run({"replay", path, "--step", "1301", "--no-what-if", "--json"});
    QVERIFY2(replay.code == 0, qPrintable(replay.err));
    QCOMPARE(replay.objects.size(), 1);
    QCOMPARE(replay.objects.front()["verdict"].toString(), QStringLiteral("reproduced"));
}

QTEST_GUILESS_MAIN(TestKeepPolicy)
#include "tst_keep_policy.moc"
