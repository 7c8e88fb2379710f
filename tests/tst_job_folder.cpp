// A data-parallel job's run folder: the ranks found by their run rows, a NaN sample injected on
// one rank, the rank x layer data of a step, `report` and `replay` on the folder.
#include "rank_processes.h"

#include "nanscope/job_folder.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

using namespace nanscope;
using namespace nanscope::testing;

class TestJobFolder : public QObject {
    Q_OBJECT

private slots:
    void aNanSampleOnOneRankIsNamed();
    void ranksAreFoundByTheirRunRows();
    void aJobFolderIsReportedAndReplayed();
    void theTextReportFollowsTheSteps();
    void ranksThatCannotStartSayWhy();
    void badInjectionsSayWhy_data();
    void badInjectionsSayWhy();

private:
    QString path(const char *name) const { return dir_.filePath(QString::fromUtf8(name)); }
    // large-lr-ce (clean data, no quarantine) on 2 ranks, rank 1 drawing a NaN sample at step 3:
    // recorded once, shared.
    QString injectedJob();
    QTemporaryDir dir_;
    Finished injected_;
};

QString TestJobFolder::injectedJob()
{
    const QString folder = path("injected");
    if (!QFile::exists(folder + "/rank-1.nsrun"))
        injected_ = runNanscope({"run", "--scenario", "large-lr-ce", "--steps", "6", "--ranks", "2", "--json",
                                 "--inject", "nan-sample@1:3", "--record", folder});
    return folder;
}

void TestJobFolder::aNanSampleOnOneRankIsNamed()
{
    const QString folder = injectedJob();
    QVERIFY2(injected_.code == 0, qPrintable(injected_.err));
    const std::vector<StepRecordPtr> ranks[2] = {stepsOf(folder + "/rank-0.nsrun"), stepsOf(folder + "/rank-1.nsrun")};
    QCOMPARE(int(ranks[1].size()), 6);
    for (int step = 0; step < 6; ++step) {
        const StepRecord &a = *ranks[0][std::size_t(step)], &b = *ranks[1][std::size_t(step)];
        QCOMPARE(a.skipped, step == 3);  // on every rank, though rank 0's own step was finite
        QCOMPARE(b.skipped, step == 3);
        QVERIFY(!a.failed());
        QCOMPARE(b.failed(), step == 3);
    }
    const StepRecord &bad = *ranks[1][3];
    QCOMPARE(bad.origin.phase, Phase::Input);
    QCOMPARE(int(bad.badSamples.size()), 1);  // one sample of rank 1's batch
    QCOMPARE(bad.inputHealth.nan, std::int64_t(1));
    QVERIFY2(QString::fromStdString(ranks[0][3]->why).startsWith("non-finite before the all-reduce on rank 1 (input)"),
             ranks[0][3]->why.c_str());
    for (int r = 0; r < 2; ++r)
        QVERIFY(texts(injected_, r, "info").contains("parameters identical on all 2 ranks"));

    // The run rows say which rank of how many wrote each file.
    for (int r = 0; r < 2; ++r) {
        const RunFile file((folder + QString("/rank-%1.nsrun").arg(r)).toStdString());
        QCOMPARE(file.info().rank, r);
        QCOMPARE(file.info().worldSize, 2);
    }

    // The rank x layer view's data: rank 1 went non-finite first, at step 3, in its input; rank 0's
    // record of that step is finite in every layer.
    const std::vector<JobRank> job = jobRunFiles(folder.toStdString());
    const JobFailure first = firstJobFailure(job);
    QCOMPARE(job[std::size_t(first.rankIndex)].rank, 1);
    QCOMPARE(first.step, 3);
    const JobStep step = readJobStep(job, 3);
    QCOMPARE(step.lastStep, 5);
    QCOMPARE(int(step.ranks.size()), 2);
    QVERIFY(step.ranks[1].record && step.ranks[1].record->failed());
    QVERIFY(step.ranks[0].record && !step.ranks[0].record->failed());
    for (const LayerHealth &h : step.ranks[0].record->layers)
        QVERIFY(!h.forward.hasNonFinite() && !h.grad.hasNonFinite() && !h.paramGrads.hasNonFinite());
    QVERIFY(!readJobStep(job, 9).ranks[0].record);  // not recorded

    // Replayed, rank 1's capsule of step 3 fails again, and the bisection names the sample.
    const Finished replay = runNanscope({"replay", folder, "--json", "--no-what-if"});
    QVERIFY2(replay.code == 0, qPrintable(replay.err));
    const QJsonObject verdict = replay.objects.back();
    QCOMPARE(verdict.value("rank").toInt(), 1);
    QCOMPARE(verdict.value("step").toInt(), 3);
    QCOMPARE(verdict.value("verdict").toString(), QStringLiteral("reproduced"));
    QCOMPARE(verdict.value("samples").toArray().size(), 1);
    QCOMPARE(verdict.value("samples").toArray().first().toInteger(), bad.badSamples.front());
}

void TestJobFolder::ranksAreFoundByTheirRunRows()
{
    // A launcher's own names: the run row, not the name, says the rank. A run of its own under
    // another name is no rank; two files of one rank are refused.
    const QString job = injectedJob();
    const QString folder = path("renamed");
    QVERIFY(QDir().mkpath(folder));
    QVERIFY(QFile::copy(job + "/rank-0.nsrun", folder + "/node-b.nsrun"));
    QVERIFY(QFile::copy(job + "/rank-1.nsrun", folder + "/node-a.nsrun"));
    const Finished alone =
        runNanscope({"run", "--scenario", "safe-training", "--steps", "2", "--record", folder + "/alone.nsrun"});
    QVERIFY2(alone.code == 0, qPrintable(alone.err));
    const std::vector<JobRank> ranks = jobRunFiles(folder.toStdString());
    QCOMPARE(int(ranks.size()), 2);
    QCOMPARE(ranks[0].rank, 0);
    QVERIFY(QString::fromStdString(ranks[0].path).endsWith("node-b.nsrun"));
    QCOMPARE(ranks[1].rank, 1);
    QVERIFY(QString::fromStdString(ranks[1].path).endsWith("node-a.nsrun"));

    // A copy beside the rank's own rank-R.nsrun is not the rank's; files of another job refuse.
    const QString copied = path("copied");
    QVERIFY(QDir().mkpath(copied));
    QVERIFY(QFile::copy(job + "/rank-0.nsrun", copied + "/rank-0.nsrun"));
    QVERIFY(QFile::copy(job + "/rank-1.nsrun", copied + "/rank-1.nsrun"));
    QVERIFY(QFile::copy(job + "/rank-1.nsrun", copied + "/saved-copy.nsrun"));
    QVERIFY(QFile::copy(job + "/rank-0.nsrun", copied + "/0-copy.nsrun"));  // two copies, sorted first
    QVERIFY(QFile::copy(job + "/rank-0.nsrun", copied + "/00-copy.nsrun"));
    const std::vector<JobRank> kept = jobRunFiles(copied.toStdString());
    QCOMPARE(int(kept.size()), 2);
    QVERIFY(QString::fromStdString(kept[0].path).endsWith("/rank-0.nsrun"));
    QVERIFY(QString::fromStdString(kept[1].path).endsWith("/rank-1.nsrun"));
    const QString single = path("single");
    const Finished one =
        runNanscope({"run", "--scenario", "large-lr-ce", "--steps", "2", "--ranks", "1", "--record", single, "--json"});
    QVERIFY2(one.code == 0, qPrintable(one.err));
    QVERIFY(QFile::copy(single + "/rank-0.nsrun", copied + "/other-job.nsrun"));
    try {
        jobRunFiles(copied.toStdString());
        QFAIL("the files of two jobs were accepted as one");
    } catch (const RunFileError &e) {
        const QString what = QString::fromUtf8(e.what());
        QVERIFY2(what.contains("holds the files of different jobs: 0-copy.nsrun (world size 2, store 127.0.0.1:") &&
                     what.contains("and other-job.nsrun (world size 1, store 127.0.0.1:"),
                 e.what());
    }
    // Two jobs of one size, one rank from each: they met at different stores.
    const QString second = path("second"), mixed = path("mixed");
    const Finished again =
        runNanscope({"run", "--scenario", "large-lr-ce", "--steps", "2", "--ranks", "2", "--record", second, "--json"});
    QVERIFY2(again.code == 0, qPrintable(again.err));
    QVERIFY(QDir().mkpath(mixed));
    QVERIFY(QFile::copy(job + "/rank-0.nsrun", mixed + "/rank-0.nsrun"));
    QVERIFY(QFile::copy(second + "/rank-1.nsrun", mixed + "/rank-1.nsrun"));
    try {
        jobRunFiles(mixed.toStdString());
        QFAIL("two jobs of one size were accepted as one");
    } catch (const RunFileError &e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains("holds the files of different jobs: rank-0.nsrun (world size 2"),
                 e.what());
    }

    QVERIFY(QFile::copy(job + "/rank-1.nsrun", folder + "/node-c.nsrun"));
    try {
        jobRunFiles(folder.toStdString());
        QFAIL("two files of rank 1 were accepted");
    } catch (const RunFileError &e) {
        QCOMPARE(QString::fromUtf8(e.what()), folder + ": two run files are rank 1's: node-a.nsrun and node-c.nsrun "
                                                       "(one folder holds one job)");
    }
}

void TestJobFolder::aJobFolderIsReportedAndReplayed()
{
    const QString folder = path("folder");
    QVERIFY(runNanscope({"run", "--scenario", "nan-input", "--steps", "8", "--ranks", "2", "--record", folder}).code ==
            0);
    const Finished report = runNanscope({"report", folder, "--json"});
    QVERIFY2(report.code == 0, qPrintable(report.err));
    QList<int> ranks;
    for (const QJsonObject &o : report.objects)
        if (o.value("type").toString() == "summary")
            ranks << o.value("rank").toInt();
    QCOMPARE(ranks, (QList<int>{0, 1}));
    // The rank whose first non-finite step came first: the one whose run file says so.
    int first = -1, firstStep = 1 << 30;
    for (int r = 0; r < 2; ++r)
        for (const StepRecordPtr &s : stepsOf(folder + QString("/rank-%1.nsrun").arg(r)))
            if (s->failed() && s->step < firstStep) {
                firstStep = s->step;
                first = r;
            }
    QVERIFY(first >= 0);
    Finished replay = runNanscope({"replay", folder, "--json", "--no-what-if"});
    QVERIFY2(replay.code == 0, qPrintable(replay.err));
    QCOMPARE(replay.objects.back().value("rank").toInt(), first);
    QCOMPARE(replay.objects.back().value("step").toInt(), firstStep);
    QCOMPARE(replay.objects.back().value("verdict").toString(), QStringLiteral("reproduced"));
    replay = runNanscope({"replay", folder, "--rank", "7"});
    QCOMPARE(replay.code, 2);
    QVERIFY2(replay.err.contains("holds no run file of rank 7"), qPrintable(replay.err));
    QVERIFY(runNanscope({"report", path("")}).err.contains("holds no rank's run file"));
}

void TestJobFolder::theTextReportFollowsTheSteps()
{
    // The ranks' events come step by step across the ranks, though each rank prints its own; the
    // summaries close the report, by rank.
    const Finished f = runNanscope({"run", "--scenario", "nan-input", "--steps", "12", "--ranks", "2"});
    QVERIFY2(f.code == 0, qPrintable(f.err));
    const QRegularExpression event(QStringLiteral("^rank (\\d): step (\\d+): "));
    const QRegularExpression summary(QStringLiteral("^rank (\\d): 12 steps, "));
    int lastStep = -1, events = 0;
    QList<int> ranksOfEvents, ranksOfSummaries;
    for (const QString &line : f.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        if (const auto m = event.match(line); m.hasMatch()) {
            QVERIFY2(ranksOfSummaries.isEmpty(), qPrintable(line));  // no event after a summary
            QVERIFY2(m.captured(2).toInt() >= lastStep, qPrintable(f.out));
            lastStep = m.captured(2).toInt();
            ranksOfEvents << m.captured(1).toInt();
            ++events;
        } else if (const auto s = summary.match(line); s.hasMatch()) {
            ranksOfSummaries << s.captured(1).toInt();
        }
    }
    QVERIFY(events >= 6);
    QVERIFY(ranksOfEvents.contains(0) && ranksOfEvents.contains(1));
    QCOMPARE(lastStep, 12);  // the parameters compared at the end
    QCOMPARE(ranksOfSummaries, (QList<int>{0, 1}));
}

void TestJobFolder::ranksThatCannotStartSayWhy()
{
    // Every rank stops before its first step: the report says why, rank by rank, and fails.
    const Finished f = runNanscope(
        {"run", "--scenario", "large-lr-ce", "--steps", "3", "--ranks", "2", "--inject-fault", "bitflip@1:nosuch:1"});
    QCOMPARE(f.code, 1);
    for (int r = 0; r < 2; ++r) {
        QVERIFY2(f.out.contains(
                     QStringLiteral("rank %1: stopped after 0 steps: cannot inject a fault into 'nosuch'").arg(r)),
                 qPrintable(f.out));
        // Its error event names no step: there was none.
        QVERIFY2(f.out.contains(QStringLiteral("rank %1: error: cannot inject a fault into 'nosuch'").arg(r)),
                 qPrintable(f.out));
    }
    QVERIFY2(!f.out.contains(QLatin1String("step -1")), qPrintable(f.out));
}

void TestJobFolder::badInjectionsSayWhy_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("not a kind") << QStringList{"--inject", "nan@3"}
                                << "--inject is nan-sample@STEP, or nan-sample@RANK:STEP in a job, got 'nan@3'";
    QTest::newRow("rank past the job") << QStringList{"--inject", "nan-sample@5:1", "--ranks", "2"}
                                       << "--inject names rank 5, not one of the job's 2";
    QTest::newRow("a rank without a job")
        << QStringList{"--inject", "nan-sample@1:2"} << "a NaN sample on rank 1 needs a job with that rank (--ranks N)";
    QTest::newRow("not a step") << QStringList{"--inject", "nan-sample@x"} << "--inject's STEP";
    QTest::newRow("a job's sample without its rank")
        << QStringList{"--inject", "nan-sample@3", "--ranks", "2"}
        << "in a job, a NaN sample names its rank: --inject nan-sample@RANK:STEP";
}

void TestJobFolder::badInjectionsSayWhy()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Finished f = runNanscope(QStringList{"run", "--scenario", "safe-training", "--steps", "3"} + args);
    QVERIFY(f.code != 0);
    QVERIFY2(f.err.contains(message), qPrintable(f.err));
}

QTEST_GUILESS_MAIN(TestJobFolder)
#include "tst_job_folder.moc"
