// Capsules and `replay`: every failing scenario's first non-finite step computed again from its
// capsule, the what-ifs, a transient fault, a model run replayed without its model file, and the
// messages for files that cannot be replayed. The samples: tst_replay_samples.
#include "cli_runner.h"
#include "run_file_helpers.h"
#include "torchscript_fixtures.h"

#include "nanscope/capsule_file.h"
#include "nanscope/replay.h"
#include "nanscope/scenario.h"

#include <QDir>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>
#include <torch/cuda.h>

#include <algorithm>
#include <set>

using namespace nanscope;
using namespace nanscope::testing;

namespace {

ReplayReport replayOnly(const std::string &path, int step = -1)
{
    ReplayOptions o;
    o.step = step;
    o.samples = false;
    o.whatIf = false;
    return replayCapsule(path, o);
}

const WhatIf *findWhatIf(const ReplayReport &r, const std::string &change, const std::string &from)
{
    for (const WhatIf &w : r.whatIf)
        if (w.change == change && w.from == from)
            return &w;
    return nullptr;
}

std::string replayError(const std::string &path, int step = -1)
{
    try {
        replayOnly(path, step);
    } catch (const std::exception &e) {
        return e.what();
    }
    return {};
}

}  // namespace

class TestReplay : public QObject {
    Q_OBJECT

private slots:
    void everyFailingScenarioReproduces_data();
    void everyFailingScenarioReproduces();
    void divergenceNeedsTheSnapshot();
    void aScenarioWindowComesFromTheSeed();
    void fp16OverflowIsFiniteInBf16();
    void aTransientFaultIsNotReproduced();
    void anAskedStepReplays();
    void otherThreadsAreReportedHonestly();
    void aModelRunReplaysWithoutItsFile();
    void filesThatCannotBeReplayed();
    void theCommandLineReplays();
    void aCudaCapsuleReplaysOnTheCpu();
    void thePausedStepCanBeSaved();

private:
    std::string path(const char *name) const { return dir_.filePath(QString::fromUtf8(name)).toStdString(); }
    QTemporaryDir dir_;
};

void TestReplay::everyFailingScenarioReproduces_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<int>("steps");
    for (const ScenarioInfo &s : scenarios())
        if (s.id != "large-lr-ce" && s.id != "safe-training")  // the two that stay finite
            // Enough steps to reach each scenario's first non-finite step (see docs/scenarios.md).
            QTest::addRow("%s", s.id.c_str()) << QString::fromStdString(s.id)
                                              << (s.id == "fp16-overflow"          ? 70
                                                  : s.id == "hidden-by-nan-to-num" ? 20
                                                  : s.id == "negative-variance"    ? 30
                                                                                   : 12);
}

void TestReplay::everyFailingScenarioReproduces()
{
    QFETCH(QString, id);
    QFETCH(int, steps);
    const std::string file = path("scenario.nsrun");
    const auto run = recordRun(scenario(id.toStdString(), steps), file);
    QVERIFY(run->summary.error.empty());
    const int failing = run->summary.firstNonFiniteStep;
    QVERIFY(failing >= 0);

    const std::vector<CapsuleEntry> capsules = runFileCapsules(file);
    QCOMPARE(int(capsules.size()), 1);
    QCOMPARE(capsules[0].step, failing);
    QCOMPARE(capsules[0].reason, std::string(kCapsuleFirstNonFinite));
    QVERIFY(capsules[0].bytes > 0);

    const ReplayReport r = replayOnly(file);
    QCOMPARE(r.step, failing);
    QCOMPARE(replayVerdictId(r.verdict), "reproduced");
    QCOMPARE(r.differsAt, -1);
    QVERIFY(r.recordedFailed && r.replayedFailed);
    QCOMPARE(r.origin.phase, run->summary.origin.phase);
    QCOMPARE(r.origin.layerPath, run->summary.origin.layerPath);
    QCOMPARE(r.origin.op, run->summary.origin.op);
}

void TestReplay::divergenceNeedsTheSnapshot()
{
    const std::string file = path("large-lr-mse.nsrun");
    const auto run = recordRun(scenario("large-lr-mse", 12), file);
    const ReplayReport r = replayCapsule(file);
    QCOMPARE(r.step, run->summary.firstNonFiniteStep);
    const WhatIf *atStep = findWhatIf(r, "lr=0.5", "step");
    const WhatIf *fromSnapshot = findWhatIf(r, "lr=0.5", "snapshot");
    const WhatIf *asRecorded = findWhatIf(r, "none", "snapshot");
    QVERIFY(atStep && fromSnapshot && asRecorded);
    // The forward pass overflows before any update: a smaller LR for that step alone changes nothing.
    QVERIFY(!atStep->finite);
    QVERIFY(fromSnapshot->finite);
    QVERIFY(!asRecorded->finite);  // the snapshot's run as recorded fails again at the same step
    QCOMPARE(asRecorded->note, "non-finite at step " + std::to_string(r.step));
    QVERIFY(r.notes.empty() || r.notes.front().find("no particular samples") != std::string::npos);
}

void TestReplay::aScenarioWindowComesFromTheSeed()
{
    // A scenario's batches since the snapshot keep only their dataset indices and a hash: replay
    // regenerates their data from the seed, and refuses to use data that differs.
    const std::string file = path("window.nsrun");
    recordRun(scenario("large-lr-mse", 12), file);
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    sqlite3_stmt *q = nullptr;
    QCOMPARE(
        sqlite3_prepare_v2(db,
                           "SELECT json_array_length(meta, '$.window'), json_extract(meta, '$.window[0].data_hash') "
                           "FROM capsules",
                           -1, &q, nullptr),
        SQLITE_OK);
    QCOMPARE(sqlite3_step(q), SQLITE_ROW);
    QVERIFY(sqlite3_column_int(q, 0) > 0);
    QVERIFY(sqlite3_column_type(q, 1) == SQLITE_TEXT);
    sqlite3_finalize(q);
    QVERIFY(findWhatIf(replayCapsule(file), "lr=0.5", "snapshot"));

    QCOMPARE(sqlite3_exec(db, "UPDATE capsules SET meta = json_set(meta, '$.window[0].data_hash', '1')", nullptr,
                          nullptr, nullptr),
             SQLITE_OK);
    sqlite3_close(db);
    const ReplayReport r = replayCapsule(file);
    QVERIFY(!findWhatIf(r, "lr=0.5", "snapshot"));
    QVERIFY(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string &n) {
        return n.find("regenerated from the seed differs") != std::string::npos;
    }));
}

void TestReplay::fp16OverflowIsFiniteInBf16()
{
    const std::string file = path("fp16.nsrun");
    recordRun(scenario("fp16-overflow", 70), file);
    const ReplayReport r = replayCapsule(file);
    QCOMPARE(replayVerdictId(r.verdict), "reproduced");
    const WhatIf *bf16 = findWhatIf(r, "precision=bf16", "step");
    QVERIFY(bf16);
    QVERIFY(bf16->finite);
}

void TestReplay::aTransientFaultIsNotReproduced()
{
    const std::string file = path("fault.nsrun");
    RunConfig c = scenario("safe-training", 8);
    c.fault = {5, "fc1"};
    const auto run = recordRun(c, file);
    QVERIFY(std::any_of(run->events.begin(), run->events.end(), [](const Event &e) {
        return e.step == 5 && e.kind == EventKind::Warning && e.text.find("fc1.weight[") != std::string::npos;
    }));
    const std::vector<CapsuleEntry> capsules = runFileCapsules(file);
    QCOMPARE(int(capsules.size()), 1);
    QCOMPARE(capsules[0].reason, std::string(kCapsuleFault));
    const ReplayReport r = replayOnly(file);
    QCOMPARE(r.step, 5);
    QCOMPARE(replayVerdictId(r.verdict), "not-reproduced");
    QCOMPARE(r.differsAtPath, std::string("fc1"));
    QVERIFY(r.differsWhat.rfind("params", 0) == 0);
}

void TestReplay::anAskedStepReplays()
{
    const std::string file = path("asked.nsrun");
    RunConfig c = scenario("safe-training", 6);
    c.capsuleSteps = {2, 4};
    recordRun(c, file);
    const std::vector<CapsuleEntry> capsules = runFileCapsules(file);
    QCOMPARE(int(capsules.size()), 2);
    QCOMPARE(capsules[1].step, 4);
    QCOMPARE(capsules[1].reason, std::string(kCapsuleAsked));
    QCOMPARE(capsules[1].snapshotStep, 0);
    const ReplayReport r = replayCapsule(file, ReplayOptions{4, "cpu", 0, true, true, {}});
    QCOMPARE(replayVerdictId(r.verdict), "reproduced");
    QVERIFY(!r.recordedFailed && !r.replayedFailed);
    QVERIFY(r.samples.empty());
    const WhatIf *asRecorded = findWhatIf(r, "none", "snapshot");
    QVERIFY(asRecorded && asRecorded->finite);
}

void TestReplay::otherThreadsAreReportedHonestly()
{
    const std::string file = path("threads.nsrun");
    recordRun(scenario("exploding-deep", 2), file);
    ReplayOptions o;
    o.threads = 2;
    o.samples = o.whatIf = false;
    const ReplayReport r = replayCapsule(file, o);
    QCOMPARE(r.threads, 2);
    QVERIFY(std::any_of(r.notes.begin(), r.notes.end(),
                        [](const std::string &n) { return n == "replayed with 2 threads; recorded with 1"; }));
    // The same failure either way; bit for bit only if the kernels split the work alike.
    QVERIFY(r.verdict != ReplayVerdict::NotReproduced);
    QVERIFY(r.replayedFailed);
    QCOMPARE(r.origin.layerPath, std::string("fc28"));
}

void TestReplay::aModelRunReplaysWithoutItsFile()
{
    QTemporaryDir modelDir;
    const std::string model = modelDir.filePath("forward-nan.pt").toStdString();
    fixtures::writeModel("forward-nan", model);
    RunConfig c;
    c.modelPath = model;
    c.inputShape = {8, 4};
    c.steps = 3;
    const std::string recorded = modelDir.filePath("run.nsrun").toStdString();
    const auto run = recordRun(c, recorded);
    QVERIFY2(run->summary.error.empty(), run->summary.error.c_str());
    QCOMPARE(run->summary.firstNonFiniteStep, 0);

    const std::string moved = path("moved.nsrun");
    copyRunFile(recorded, moved);
    QVERIFY(QFile::remove(QString::fromStdString(model)));
    const ReplayReport r = replayOnly(moved);
    QCOMPARE(replayVerdictId(r.verdict), "reproduced");
    QCOMPARE(r.origin.op, std::string("aten::log"));

    // An embedded model whose bytes no longer match the sha256 it was stored under.
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open(moved.c_str(), &db), SQLITE_OK);
    QCOMPARE(sqlite3_exec(db, "UPDATE embedded_files SET data = zeroblob(64)", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    QVERIFY(replayError(moved).find("sha256") != std::string::npos);
    QCOMPARE(sqlite3_open(moved.c_str(), &db), SQLITE_OK);
    QCOMPARE(sqlite3_exec(db, "DELETE FROM embedded_files", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    QVERIFY(replayError(moved).find("is missing") != std::string::npos);
}

void TestReplay::filesThatCannotBeReplayed()
{
    const std::string finite = path("finite.nsrun");
    recordRun(scenario("safe-training", 3), finite);
    QVERIFY(replayError(finite).find("holds no capsule") != std::string::npos);

    const std::string failing = path("failing.nsrun");
    recordRun(scenario("large-lr-mse", 10), failing);
    const std::string wrongStep = replayError(failing, 3);
    QVERIFY2(wrongStep.find("no capsule of step 3 (the file holds capsules of step 8)") != std::string::npos,
             wrongStep.c_str());

    // A file written before capsules existed has none to list.
    const std::string old = NANSCOPE_RUN_FILE_CORPUS "/good-log-zero.nsrun";
    QVERIFY(runFileCapsules(old).empty());
    QVERIFY(replayError(old).find("holds no capsule") != std::string::npos);

    // A damaged capsule: a clear message, not a LibTorch trace.
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open(failing.c_str(), &db), SQLITE_OK);
    QCOMPARE(sqlite3_exec(db, "UPDATE capsules SET state = zeroblob(1000)", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    const std::string damaged = replayError(failing);
    QVERIFY2(damaged.find("the capsule of step 8 is damaged") != std::string::npos, damaged.c_str());
    QVERIFY(damaged.find('\n') == std::string::npos);
}

void TestReplay::theCommandLineReplays()
{
    const QString file = QString::fromStdString(path("cli.nsrun"));
    const Output recorded =
        run({"run", "--scenario", "nan-input", "--steps", "3", "--capsule-at", "2", "--record", file});
    QCOMPARE(recorded.code, 0);
    const Output replay = run({"replay", file, "--json"});
    QCOMPARE(replay.code, 0);
    QCOMPARE(replay.objects.size(), 1);
    const QJsonObject j = replay.objects.front();
    QCOMPARE(j["type"].toString(), QStringLiteral("replay"));
    QCOMPARE(j["step"].toInt(), 0);
    QCOMPARE(j["verdict"].toString(), QStringLiteral("reproduced"));
    QVERIFY(j["differs_at"].isNull());
    QCOMPARE(j["origin"].toObject()["phase"].toString(), QStringLiteral("input"));
    QCOMPARE(j["samples"].toArray().size(), 1);
    QCOMPARE(j["samples"].toArray().first().toInt(), 50);
    bool withoutThem = false;
    for (const QJsonValue &w : j["what_if"].toArray())
        withoutThem = withoutThem ||
                      (w.toObject()["change"].toString() == QStringLiteral("without samples 50") &&
                       w.toObject()["from"].toString() == QStringLiteral("step") && w.toObject()["finite"].toBool());
    QVERIFY(withoutThem);

    const Output asked = run({"replay", file, "--step", "2", "--no-what-if"});
    QCOMPARE(asked.code, 0);
    QVERIFY(asked.out.contains(QStringLiteral("verdict: reproduced")));
    const Output none = run({"replay", file, "--step", "1"});
    QCOMPARE(none.code, 1);
    QVERIFY2(none.err.contains(QStringLiteral("no capsule of step 1 (the file holds capsules of step 0, 2)")),
             qPrintable(none.err));
    const Output badFault = run({"run", "--scenario", "nan-input", "--inject-fault", "bitflip@2"});
    QCOMPARE(badFault.code, 2);
    QVERIFY(badFault.err.contains(QStringLiteral("bitflip@STEP:LAYER")));
}

void TestReplay::aCudaCapsuleReplaysOnTheCpu()
{
    const std::string file = path("cuda.nsrun");
    recordRun(scenario("log-zero", 2), file);
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    QCOMPARE(
        sqlite3_exec(db, "UPDATE capsules SET meta = json_set(meta, '$.device', 'cuda')", nullptr, nullptr, nullptr),
        SQLITE_OK);
    sqlite3_close(db);
    ReplayReport r = replayOnly(file);
    QCOMPARE(r.device, std::string("cpu"));
    QCOMPARE(r.notes, std::vector<std::string>{"recorded on cuda, replayed on cpu"});
    QCOMPARE(replayVerdictId(r.verdict), "reproduced");
    if (torch::cuda::is_available())
        QSKIP("this machine has CUDA: replaying there is the device check's");
    ReplayOptions o;
    o.device = "cuda";
    o.samples = o.whatIf = false;
    r = replayCapsule(file, o);
    QCOMPARE(r.device, std::string("cpu"));
    QCOMPARE(r.notes.front(), std::string("this machine has no CUDA device: replayed on the CPU"));
}

void TestReplay::thePausedStepCanBeSaved()
{
    const std::string file = path("paused.nsrun");
    RunConfig c = scenario("large-lr-mse", 12);
    c.capsuleOnFailure = false;
    Controls controls = defaultControls(c);
    controls.pauseOnNonFinite = true;
    c.controls = controls;
    recordRun(c, file, [](Session &s) {
        QTRY_VERIFY_WITH_TIMEOUT(s.state() == SessionState::Paused, 30000);
        QVERIFY(s.requestCapsule());
        s.stop();  // a request made before the stop is saved before the worker stops
    });
    const std::vector<CapsuleEntry> capsules = runFileCapsules(file);
    QCOMPARE(int(capsules.size()), 1);
    QCOMPARE(capsules[0].step, 8);
    QCOMPARE(capsules[0].reason, std::string(kCapsuleAsked));
    QCOMPARE(replayVerdictId(replayOnly(file).verdict), "reproduced");
}

QTEST_GUILESS_MAIN(TestReplay)
#include "tst_replay.moc"
