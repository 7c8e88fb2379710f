// Data-parallel jobs: ranks started by `run --ranks N` and by torchrun's variables, the rank the
// arbitration names, skip and exclude, the parameters afterwards, a killed rank, bad environments.
// 2 cores here: jobs of 2 ranks of one thread each.
#include "rank_processes.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>

#include <signal.h>

#include <cmath>
#include <cstring>
#include <set>

using namespace nanscope;
using namespace nanscope::testing;

class TestRanks : public QObject {
    Q_OBJECT

private slots:
    void theRankThatWentNonFiniteIsNamed_data();
    void theRankThatWentNonFiniteIsNamed();
    void excludeAppliesTheFiniteRanksGradient();
    void oneRankIsAPlainRun();
    void theLossScalerBacksOffOnEveryRank();
    void ranksFromTheEnvironmentMatchTheLauncher();
    void ranksThatAskForDifferentCollectivesSayWhich();
    void aBitFlipOnOneRankIsNamed();
    void aKilledRankStopsTheOthers();
    void theBenchmarkComparesSideBySide();
    void badEnvironmentsSayWhy_data();
    void badEnvironmentsSayWhy();

private:
    QString path(const char *name) const { return dir_.filePath(QString::fromUtf8(name)); }
    QTemporaryDir dir_;
};

void TestRanks::theRankThatWentNonFiniteIsNamed_data()
{
    QTest::addColumn<QString>("policy");
    QTest::newRow("skip") << QStringLiteral("skip");
    QTest::newRow("exclude") << QStringLiteral("exclude");
}

void TestRanks::theRankThatWentNonFiniteIsNamed()
{
    // nan-input's samples 10 and 50 hold NaN/Inf: each lands on the rank whose shard holds it, once
    // in the first epoch (8 steps of 32 of a shard of 250).
    QFETCH(QString, policy);
    const QString folder = path(qPrintable("job-" + policy));
    const Finished f = runNanscope({"run", "--scenario", "nan-input", "--steps", "8", "--ranks", "2", "--json",
                                    "--on-bad-rank", policy, "--param-check-every", "2", "--record", folder});
    QVERIFY2(f.code == 0, qPrintable(f.err));
    const std::vector<StepRecordPtr> ranks[2] = {stepsOf(folder + "/rank-0.nsrun"), stepsOf(folder + "/rank-1.nsrun")};
    QCOMPARE(int(ranks[0].size()), 8);
    QCOMPARE(int(ranks[1].size()), 8);
    int named = 0;
    std::set<std::int64_t> found;
    for (int step = 0; step < 8; ++step) {
        const StepRecord &a = *ranks[0][std::size_t(step)], &b = *ranks[1][std::size_t(step)];
        const int bad = !a.badSamples.empty() ? 0 : !b.badSamples.empty() ? 1 : -1;
        if (bad < 0) {
            QVERIFY(!a.skipped && !b.skipped);
            continue;
        }
        const StepRecord &badRecord = bad == 0 ? a : b;
        found.insert(badRecord.badSamples.begin(), badRecord.badSamples.end());
        // The other rank's own step stayed finite: the arbitration, not its map, tells it.
        const StepRecord &other = bad == 0 ? b : a;
        if (other.badSamples.empty())
            QVERIFY(!other.failed());
        const QString expected = QStringLiteral("non-finite before the all-reduce on rank %1 (input)").arg(bad);
        for (int r = 0; r < 2; ++r) {
            const StepRecord &rec = r == 0 ? a : b;
            QVERIFY2(QString::fromStdString(rec.why).startsWith(expected), rec.why.c_str());
            QCOMPARE(rec.skipped, policy == "skip");
            QVERIFY(texts(f, r, "recovery").filter(expected).size() >= 1);
        }
        ++named;
    }
    QVERIFY(found == (std::set<std::int64_t>{10, 50}));
    QVERIFY(named >= 1);
    // Each rank's run file keeps its place in the job as it was asked for.
    for (int r = 0; r < 2; ++r) {
        const DataParallel p =
            RunFile((folder + QString("/rank-%1.nsrun").arg(r)).toStdString()).info().config.parallel;
        QCOMPARE(p.rank, r);
        QCOMPARE(p.world, 2);
        QCOMPARE(p.localRank, r);  // --ranks sets LOCAL_RANK
        QVERIFY(p.backend == CollectiveBackend::Auto);
        QVERIFY(p.onBadRank == (policy == "skip" ? BadRankPolicy::Skip : BadRankPolicy::Exclude));
        QCOMPARE(p.checkEvery, 2);
    }
    // The same parameters everywhere afterwards, and finite.
    for (int r = 0; r < 2; ++r) {
        QVERIFY(texts(f, r, "info").contains("parameters identical on all 2 ranks"));
        // A CPU job's ranks all chose Gloo, NCCL being for GPUs.
        QCOMPARE(texts(f, r, "info").filter("collectives over").join(QString()),
                 QStringLiteral("rank %1: collectives over Gloo").arg(r));
        QVERIFY(texts(f, r, "warning").filter("differ").isEmpty());
    }
    for (const QJsonObject &o : f.objects)
        if (o.value(QLatin1String("type")).toString() == "summary")
            QVERIFY(o.value(QLatin1String("final_state_finite")).toBool());

    // The job's verdict, last: the first step on which a rank failed, from the ranks' own records
    // (the lowest rank on a tie), and the ranks whose records hold a skipped step.
    int firstStep = -1, firstRank = -1;
    QJsonArray skipped;
    for (int r = 0; r < 2; ++r) {
        for (const StepRecordPtr &rec : ranks[r])
            if (rec->failed() && (firstStep < 0 || rec->step < firstStep)) {
                firstStep = rec->step;
                firstRank = r;
            }
        if (std::any_of(ranks[r].begin(), ranks[r].end(), [](const StepRecordPtr &rec) { return rec->skipped; }))
            skipped.append(r);
    }
    QVERIFY(firstStep >= 0);
    const QJsonObject job = f.objects.back();
    QCOMPARE(job.value("type").toString(), QStringLiteral("job"));
    QCOMPARE(job.value("world").toInt(), 2);
    QCOMPARE(job.value("first_nonfinite_rank").toInt(-1), firstRank);
    QCOMPARE(job.value("first_nonfinite_step").toInt(-1), firstStep);
    QCOMPARE(job.value("phase").toString(), QStringLiteral("input"));
    QCOMPARE(job.value("ranks_that_skipped").toArray(), skipped);
    QCOMPARE(skipped.isEmpty(), policy == "exclude");
    QCOMPARE(job.value("ranks_unfinished").toArray(), QJsonArray());
    QCOMPARE(job.value("parameters_identical").toBool(false), true);
    // `report FOLDER` reads the same verdict back from the run files, as JSON and as its first line.
    const Finished reported = runNanscope({"report", folder, "--json"});
    QVERIFY2(reported.code == 0, qPrintable(reported.err));
    QCOMPARE(reported.objects.back(), job);
    const Finished text = runNanscope({"report", folder});
    const QString expected = QStringLiteral("job of 2 ranks: rank %1 went non-finite first, at step %2 (input")
                                 .arg(firstRank)
                                 .arg(firstStep);
    QVERIFY2(text.out.startsWith(expected), qPrintable(text.out.left(300)));
    QVERIFY2(text.out.section(QLatin1Char('\n'), 0, 0).endsWith("; parameters identical on every rank"),
             qPrintable(text.out.left(300)));
}

// --on-bad-rank exclude on a step one rank's batch made non-finite: the update is the finite rank's
// gradient alone. With plain SGD (no momentum, no weight decay, no clipping) that update's size is
// known in advance: ||delta p|| = lr * ||g||, per layer, with g the finite rank's own gradient (its
// record's parameter gradients, observed before the all-reduce). The record gives ||delta p|| as
// update ratio * ||p||. Averaging over both ranks (the NaN one included) or over the world size
// (half the step) would both miss it.
void TestRanks::excludeAppliesTheFiniteRanksGradient()
{
    const QString folder = path("exclude-sgd");
    const double lr = 0.1;
    const Finished f = runNanscope({"run", "--scenario", "nan-input", "--steps", "8", "--ranks", "2",
                                    "--on-bad-rank", "exclude", "--optimizer", "sgd", "--momentum", "0",
                                    "--weight-decay", "0", "--lr", QString::number(lr), "--clip", "off", "--record",
                                    folder});
    QVERIFY2(f.code == 0, qPrintable(f.err));
    const std::vector<StepRecordPtr> ranks[2] = {stepsOf(folder + "/rank-0.nsrun"), stepsOf(folder + "/rank-1.nsrun")};
    QCOMPARE(int(ranks[0].size()), 8);
    QCOMPARE(int(ranks[1].size()), 8);
    int checkedLayers = 0;
    for (int step = 0; step < 8; ++step) {
        const StepRecord &a = *ranks[0][std::size_t(step)], &b = *ranks[1][std::size_t(step)];
        if (a.badSamples.empty() == b.badSamples.empty())
            continue;  // both finite (or both bad): no rank excluded
        const StepRecord &good = a.badSamples.empty() ? a : b;
        QVERIFY(!good.failed());
        for (const StepRecord *r : {&a, &b}) {
            QVERIFY(!r->skipped);  // excluded, not skipped: the update went in on both ranks
            for (std::size_t l = 0; l < good.layers.size(); ++l) {
                const LayerHealth &own = good.layers[l];
                if (!own.paramGrads.present || std::isnan(r->layers[l].updateRatio))
                    continue;  // no parameters of its own
                const double moved = r->layers[l].updateRatio * r->layers[l].params.finiteL2;
                const double expected = lr * own.paramGrads.finiteL2;
                QVERIFY2(std::fabs(moved - expected) <= 1e-4 * expected + 1e-9,
                         qPrintable(QString("step %1, rank %2, layer %3: moved %4, lr * |g| %5")
                                        .arg(step)
                                        .arg(r == &a ? 0 : 1)
                                        .arg(l)
                                        .arg(moved, 0, 'g', 9)
                                        .arg(expected, 0, 'g', 9)));
                ++checkedLayers;
            }
        }
    }
    QVERIFY(checkedLayers > 0);
}

void TestRanks::oneRankIsAPlainRun()
{
    const QString folder = path("one-rank"), plain = path("plain.nsrun");
    const QStringList run{"run", "--scenario", "safe-training", "--steps", "12", "--json"};
    Finished f = runNanscope(run + QStringList{"--ranks", "1", "--record", folder});
    QVERIFY2(f.code == 0, qPrintable(f.err));
    f = runNanscope(run + QStringList{"--record", plain});
    QVERIFY2(f.code == 0, qPrintable(f.err));
    const std::vector<StepRecordPtr> job = stepsOf(folder + "/rank-0.nsrun"), alone = stepsOf(plain);
    QCOMPARE(job.size(), alone.size());
    for (std::size_t i = 0; i < job.size(); ++i) {
        QCOMPARE(std::memcmp(&job[i]->loss, &alone[i]->loss, sizeof(double)), 0);  // bit for bit
        QCOMPARE(std::memcmp(&job[i]->gradNormClipped, &alone[i]->gradNormClipped, sizeof(double)), 0);
    }
}

void TestRanks::theLossScalerBacksOffOnEveryRank()
{
    // Gradients that overflow under a loss scaler are the scaler's, not a failed step: their Inf
    // reaches the sum, and every rank must skip the step and halve the scale alike.
    const Finished f = runNanscope(
        {"run", "--scenario", "fp16-overflow", "--steps", "6", "--loss-scale", "1e9", "--ranks", "2", "--json"});
    QVERIFY2(f.code == 0, qPrintable(f.err));
    const QStringList overflows[2] = {texts(f, 0, "recovery").filter("gradients overflowed"),
                                      texts(f, 1, "recovery").filter("gradients overflowed")};
    QCOMPARE(overflows[0].size(), 6);
    QCOMPARE(overflows[0], overflows[1]);
    QVERIFY(overflows[0].front().contains("at loss scale 1e+09: update skipped, scale now 5e+08"));
    for (int r = 0; r < 2; ++r)
        QVERIFY(texts(f, r, "info").contains("parameters identical on all 2 ranks"));
    for (const QJsonObject &o : f.objects)
        if (o.value("type").toString() == "summary")
            QVERIFY(o.value("final_state_finite").toBool());
}

void TestRanks::ranksFromTheEnvironmentMatchTheLauncher()
{
    const QString folder = path("launched");
    const QStringList run{"run", "--scenario", "large-lr-ce", "--steps", "6", "--json"};
    Finished f = runNanscope(run + QStringList{"--ranks", "2", "--record", folder});
    QVERIFY2(f.code == 0, qPrintable(f.err));
    const int port = freePort();
    QProcess ranks[2];
    for (int r = 0; r < 2; ++r)
        startRank(ranks[r], r, 2, port,
                  run + QStringList{"--record", path(qPrintable(QString("env-%1.nsrun").arg(r)))});
    for (int r = 0; r < 2; ++r) {
        const Finished one = finish(ranks[r]);
        QVERIFY2(one.code == 0, qPrintable(one.err));
        const std::vector<StepRecordPtr> byEnv = stepsOf(path(qPrintable(QString("env-%1.nsrun").arg(r))));
        const std::vector<StepRecordPtr> byLauncher = stepsOf(folder + QString("/rank-%1.nsrun").arg(r));
        QCOMPARE(byEnv.size(), byLauncher.size());
        for (std::size_t i = 0; i < byEnv.size(); ++i)
            QCOMPARE(byEnv[i]->loss, byLauncher[i]->loss);
    }
}

void TestRanks::ranksThatAskForDifferentCollectivesSayWhich()
{
    // Gloo on one rank and auto's choice on the other would build two kinds of process group and
    // wait for each other until the timeout: both stop at the rendezvous instead, with one line.
    const int port = freePort();
    QProcess ranks[2];
    const QStringList run{"run", "--scenario", "safe-training", "--steps", "3", "--collective-timeout", "20"};
    startRank(ranks[0], 0, 2, port, run);
    startRank(ranks[1], 1, 2, port, run + QStringList{"--backend", "gloo"});
    for (QProcess &rank : ranks) {
        const Finished f = finish(rank, 30000);
        QCOMPARE(f.code, 1);
        QVERIFY2(
            f.err.contains("the ranks asked for different collectives: rank 0 --backend auto, rank 1 --backend gloo"),
            qPrintable(f.err));
    }
}

void TestRanks::aBitFlipOnOneRankIsNamed()
{
    // Silent data corruption on rank 1: one exponent bit of fc1's largest weight flips at step 2 and
    // stays flipped. The parameter check of step 2 (every 3 steps) names rank 1 and fc1; replayed
    // from its capsule, without the flip, rank 1's step 2 is not reproduced.
    const QString folder = path("bitflip");
    const Finished f =
        runNanscope({"run", "--scenario", "safe-training", "--steps", "6", "--ranks", "2", "--json", "--inject-fault",
                     "bitflip@2:fc1:1", "--param-check-every", "3", "--record", folder});
    QVERIFY2(f.code == 0, qPrintable(f.err));
    for (int r = 0; r < 2; ++r) {
        const QStringList warnings = texts(f, r, "warning").filter("parameters differ");
        QVERIFY2(!warnings.isEmpty(), qPrintable(f.out));
        QCOMPARE(warnings.front(), QStringLiteral("rank 1's parameters differ from the other ranks' from fc1 on: "
                                                  "silent divergence, the signature of a hardware fault"));
        QVERIFY(!texts(f, r, "info").contains("parameters identical on all 2 ranks"));
    }
    QCOMPARE(f.objects.back().value("type").toString(), QStringLiteral("job"));
    QVERIFY(f.objects.back().value("parameters_identical") == QJsonValue(false));
    QVERIFY(texts(f, 0, "warning").filter("fault injected").isEmpty());  // rank 0 was not touched
    QCOMPARE(texts(f, 1, "warning").filter("fault injected, kept in this rank's memory").size(), 1);
    int firstNamed[2] = {-1, -1};  // the step of each rank's first divergence warning
    for (const QJsonObject &o : f.objects)
        if (o.value("type").toString() == "event" && o.value("text").toString().contains("parameters differ") &&
            firstNamed[o.value("rank").toInt()] < 0)
            firstNamed[o.value("rank").toInt()] = o.value("step").toInt();
    QCOMPARE(firstNamed[0], 2);
    QCOMPARE(firstNamed[1], 2);

    const Finished replay =
        runNanscope({"replay", folder + "/rank-1.nsrun", "--step", "2", "--json", "--no-samples", "--no-what-if"});
    QVERIFY2(replay.code == 0, qPrintable(replay.err));
    QVERIFY(!replay.objects.isEmpty());
    QCOMPARE(replay.objects.back().value("verdict").toString(), QStringLiteral("not-reproduced"));
    QCOMPARE(replay.objects.back().value("differs_at").toString(), QStringLiteral("fc1"));
}

void TestRanks::aKilledRankStopsTheOthers()
{
    const int port = freePort();
    const QStringList run{"run",    "--scenario", "safe-training",        "--steps",
                          "100000", "--json",     "--collective-timeout", "10"};
    QProcess ranks[2];
    for (int r = 0; r < 2; ++r)
        startRank(ranks[r], r, 2, port,
                  run + QStringList{"--record", path(qPrintable(QString("killed-%1.nsrun").arg(r)))});
    // Both are training once rank 1 has written a few steps.
    QElapsedTimer t;
    t.start();
    QByteArray seen;
    while (seen.count("\"type\":\"step\"") < 3 && t.elapsed() < 60000) {
        ranks[1].waitForReadyRead(1000);
        seen += ranks[1].readAllStandardOutput();
    }
    QVERIFY(seen.count("\"type\":\"step\"") >= 3);
    ::kill(pid_t(ranks[1].processId()), SIGKILL);
    t.restart();
    const Finished survivor = finish(ranks[0], 30000);
    finish(ranks[1]);
    QVERIFY2(t.elapsed() < 15000, qPrintable(QString::number(t.elapsed())));
    QCOMPARE(survivor.code, 1);
    QVERIFY2(survivor.err.contains("rank 1 vanished"), qPrintable(survivor.err));
    // The survivor's file keeps its steps and says how the run ended, with its state at the end.
    const RunFile file(path("killed-0.nsrun").toStdString());
    QVERIFY(QString::fromStdString(file.info().summary.error).startsWith("rank 1 vanished"));
    QCOMPARE(file.info().summary.precision, std::string("fp32"));
    QVERIFY(file.info().summary.stepsRun >= 3);
    const Finished report = runNanscope({"report", path("killed-0.nsrun")});
    QCOMPARE(report.code, 1);
    QVERIFY2(report.out.contains("error: rank 1 vanished"), qPrintable(report.out));
}

void TestRanks::theBenchmarkComparesSideBySide()
{
    // Rank 0 reports both medians of one run; the table the arbitration adds is world x (layers + 4)
    // floats: 2 x (10 + 4) x 4 bytes for the StableModel.
    const Finished f = runNanscope({"bench", "--ranks", "2", "--rounds", "2", "--steps", "2", "--json"});
    QVERIFY2(f.code == 0, qPrintable(f.err));
    QCOMPARE(f.objects.size(), 1);
    const QJsonObject b = f.objects.front();
    QCOMPARE(b.value("type").toString(), QStringLiteral("bench-ranks"));
    QCOMPARE(b.value("rank").toInt(), 0);
    QCOMPARE(b.value("world").toInt(), 2);
    QCOMPARE(b.value("device").toString(), QStringLiteral("cpu"));
    QCOMPARE(b.value("collectives").toString(), QStringLiteral("Gloo"));
    QCOMPARE(b.value("arbitration_bytes").toInt(), 112);
    QVERIFY(b.value("plain_ms").toDouble() > 0 && b.value("checked_ms").toDouble() > 0);
    const double ratio = b.value("checked_ms").toDouble() / b.value("plain_ms").toDouble();
    QVERIFY(std::abs(b.value("ratio").toDouble() - ratio) < 1e-6 * ratio);  // printed to 9 digits
    const QJsonArray quartiles = b.value("round_ratio_quartiles").toArray();
    QCOMPARE(quartiles.size(), 2);
    QVERIFY(quartiles[0].toDouble() > 0 && quartiles[0].toDouble() <= quartiles[1].toDouble());
    // Two rounds: the median is their mean, and its interval spans both.
    const QJsonArray interval = b.value("round_ratio_median_95ci").toArray();
    QCOMPARE(interval.size(), 2);
    const double median = b.value("round_ratio_median").toDouble();
    QCOMPARE(interval[0].toDouble(), quartiles[0].toDouble());
    QCOMPARE(interval[1].toDouble(), quartiles[1].toDouble());
    QVERIFY(interval[0].toDouble() <= median && median <= interval[1].toDouble());
}

void TestRanks::badEnvironmentsSayWhy_data()
{
    QTest::addColumn<QString>("rank");
    QTest::addColumn<QString>("world");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QStringList>("options");
    QTest::newRow("rank past the world") << "5"
                                         << "2"
                                         << "RANK=5 is not a rank of a job of WORLD_SIZE=2 (0 to 1)" << QStringList();
    QTest::newRow("not a number") << "one"
                                  << "2"
                                  << "RANK" << QStringList();
    QTest::newRow("no store") << "1"
                              << "2"
                              << "rank 1 could not join the job of 2 ranks at 127.0.0.1:" << QStringList();
    QTest::newRow("NCCL on the CPU") << "0"
                                     << "1"
                                     << "NCCL exchanges GPU tensors: --backend nccl needs --device cuda"
                                     << QStringList{"--backend", "nccl"};
    QTest::newRow("no such backend") << "0"
                                     << "1"
                                     << "--backend is auto, gloo or nccl, got 'mpi'" << QStringList{"--backend", "mpi"};
    QTest::newRow("LOCAL_RANK not a number") << "0"
                                             << "1"
                                             << "LOCAL_RANK" << QStringList{"LOCAL_RANK=first"};
}

void TestRanks::badEnvironmentsSayWhy()
{
    QFETCH(QString, rank);
    QFETCH(QString, world);
    QFETCH(QString, message);
    QFETCH(QStringList, options);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    // An option NAME=VALUE is a further variable of the environment.
    for (const QString &o : QStringList(options))
        if (o.contains(QLatin1Char('='))) {
            env.insert(o.section(QLatin1Char('='), 0, 0), o.section(QLatin1Char('='), 1));
            options.removeOne(o);
        }
    env.insert("RANK", rank);
    env.insert("WORLD_SIZE", world);
    env.insert("MASTER_ADDR", "127.0.0.1");
    env.insert("MASTER_PORT", QString::number(freePort()));  // nobody listens there
    QElapsedTimer t;
    t.start();
    const Finished f = runNanscope(
        QStringList{"run", "--scenario", "safe-training", "--steps", "3", "--collective-timeout", "2"} + options, env);
    QVERIFY(f.code != 0);
    QVERIFY2(f.err.contains(message), qPrintable(f.err));
    QCOMPARE(f.err.count(QLatin1Char('\n')), 1);
    QVERIFY(t.elapsed() < 20000);
}

QTEST_GUILESS_MAIN(TestRanks)
#include "tst_ranks.moc"
