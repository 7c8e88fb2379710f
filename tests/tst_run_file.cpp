// Run files: what a recorder writes reads back as the live run, bit for bit; a killed writer
// leaves a readable file; a reader follows a file another process writes; bad files are refused
// with one line naming the file and the cause.
#include "cli_runner.h"
#include "record_compare.h"
#include "run_collector.h"
#include "torchscript_fixtures.h"

#include "nanscope/pushed_run_source.h"
#include "nanscope/recorded_run.h"
#include "nanscope/run_file.h"
#include "nanscope/run_recorder.h"
#include "nanscope/scenario.h"
#include "nanscope/session.h"

#include <sqlite3.h>

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <atomic>
#include <cmath>
#include <sstream>
#include <limits>

using namespace nanscope;
using nanscope::testing::diffEvent;
using nanscope::testing::diffRecord;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Runs `config` on a session with a recorder beside the collector; the recorder is closed after.
std::unique_ptr<RunCollector> recordRun(const RunConfig &config, const std::string &path,
                                        const std::function<void(Session &)> &during = {})
{
    auto c = std::make_unique<RunCollector>();
    Session session;
    RunRecorder recorder(path);
    session.addObserver(c.get());
    session.addObserver(&recorder);
    std::string error;
    if (!session.start(config, &error)) {
        c->summary.error = error;
        return c;
    }
    if (during)
        during(session);
    session.wait(300000);
    session.removeObserver(c.get());
    session.removeObserver(&recorder);
    recorder.close();
    return c;
}

std::vector<StepRecordPtr> readAll(const RunFile &file)
{
    std::vector<StepRecordPtr> out;
    for (;;) {
        const auto chunk = file.readSteps(out.empty() ? -1 : out.back()->step, 1000);
        out.insert(out.end(), chunk.begin(), chunk.end());
        if (chunk.size() < 1000)
            return out;
    }
}

void compareRun(const RunCollector &live, const RunFile &file)
{
    const auto read = readAll(file);
    QCOMPARE(read.size(), live.records.size());
    for (std::size_t i = 0; i < read.size(); ++i) {
        const QString d = diffRecord(*live.records[i], *read[i]);
        QVERIFY2(d.isEmpty(), qPrintable(d));
    }
    const auto events = file.readEvents(0);
    QCOMPARE(events.size(), live.events.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
        const QString d = diffEvent(live.events[i], events[i]);
        QVERIFY2(d.isEmpty(), qPrintable(d));
    }
    QCOMPARE(file.layers().size(), live.layers.size());
    for (std::size_t i = 0; i < live.layers.size(); ++i) {
        QCOMPARE(file.layers()[i].path, live.layers[i].path);
        QCOMPARE(file.layers()[i].type, live.layers[i].type);
        QCOMPARE(file.layers()[i].parent, live.layers[i].parent);
    }
    const RunSummary &a = live.summary, &b = file.info().summary;
    QVERIFY(file.info().finished);
    QCOMPARE(b.stepsRun, a.stepsRun);
    QCOMPARE(b.firstNonFiniteStep, a.firstNonFiniteStep);
    QVERIFY(nanscope::testing::diffOrigin(a.origin, b.origin).isEmpty());
    QCOMPARE(b.nonFiniteSteps, a.nonFiniteSteps);
    QCOMPARE(b.quarantinedSamples, a.quarantinedSamples);
    QCOMPARE(b.rollbacks, a.rollbacks);
    QCOMPARE(b.skippedSteps, a.skippedSteps);
    QCOMPARE(b.scalerSkippedSteps, a.scalerSkippedSteps);
    QVERIFY(nanscope::testing::same(b.finalLossScale, a.finalLossScale));
    QCOMPARE(b.precision, a.precision);
    QVERIFY(nanscope::testing::same(b.finalLearningRate, a.finalLearningRate));
    QCOMPARE(b.stepsPerSecond, a.stepsPerSecond);
    QCOMPARE(b.nonFiniteStepsPerLayer, a.nonFiniteStepsPerLayer);
    QCOMPARE(b.finalStateFinite, a.finalStateFinite);
    QCOMPARE(b.stoppedByPolicy, a.stoppedByPolicy);
    QCOMPARE(b.error, a.error);

    // An unfinished file's summary is built from its steps: it agrees with the live one.
    SummaryBuilder builder(file.info(), file.layers().size());
    for (const StepRecordPtr &r : read)
        builder.add(*r);
    const RunSummary built = builder.summary();
    QCOMPARE(built.stepsRun, a.stepsRun);
    QCOMPARE(built.firstNonFiniteStep, a.firstNonFiniteStep);
    QCOMPARE(built.nonFiniteSteps, a.nonFiniteSteps);
    QCOMPARE(built.skippedSteps, a.skippedSteps);
    QCOMPARE(built.rollbacks, a.rollbacks);
    QCOMPARE(built.nonFiniteStepsPerLayer, a.nonFiniteStepsPerLayer);
}

double sqlValue(sqlite3_stmt *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL ? kNaN : sqlite3_column_double(s, i);
}

// What anyone reads through SQL (the layer_health view, no NaNScope code) is the record, bit for
// bit: the compact encoding of min and max decodes in SQL alone.
void compareViewWithRecords(const QString &path, const std::vector<StepRecordPtr> &records)
{
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt *s = nullptr;
    QCOMPARE(sqlite3_prepare_v2(db,
                                "SELECT numel, nan, posinf, neginf, min, max, absmax, norm FROM layer_health WHERE "
                                "step = ? AND layer = ? AND kind = ?",
                                -1, &s, nullptr),
             SQLITE_OK);
    const char *kinds[] = {"forward", "grad", "params", "param_grads"};
    int rows = 0;
    for (const StepRecordPtr &r : records)
        for (std::size_t l = 0; l < r->layers.size(); ++l) {
            const LayerHealth &lh = r->layers[l];
            const TensorHealth *hs[] = {&lh.forward, &lh.grad, &lh.params, &lh.paramGrads};
            for (int k = 0; k < 4; ++k) {
                sqlite3_reset(s);
                sqlite3_bind_int(s, 1, r->step);
                sqlite3_bind_int(s, 2, int(l));
                sqlite3_bind_text(s, 3, kinds[k], -1, SQLITE_STATIC);
                const TensorHealth &h = *hs[k];
                const int rc = sqlite3_step(s);
                QCOMPARE(rc, h.present ? SQLITE_ROW : SQLITE_DONE);
                if (!h.present)
                    continue;
                ++rows;
                QCOMPARE(sqlite3_column_int64(s, 0), h.numel);
                QCOMPARE(sqlite3_column_int64(s, 1), h.nan);
                QCOMPARE(sqlite3_column_int64(s, 2), h.posInf);
                QCOMPARE(sqlite3_column_int64(s, 3), h.negInf);
                const double values[] = {h.min, h.max, h.absMax, h.finiteL2};
                for (int v = 0; v < 4; ++v)
                    QVERIFY2(nanscope::testing::same(sqlValue(s, 4 + v), values[v]),
                             qPrintable(QString("step %1 layer %2 %3 column %4: SQL %5, record %6")
                                            .arg(r->step)
                                            .arg(l)
                                            .arg(kinds[k])
                                            .arg(4 + v)
                                            .arg(sqlValue(s, 4 + v), 0, 'g', 17)
                                            .arg(values[v], 0, 'g', 17)));
            }
        }
    sqlite3_finalize(s);
    sqlite3_close(db);
    QVERIFY(rows > 0);
}

QByteArray bytesOf(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeBytes(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(bytes);
}

// Polls until a run file at `path` opens and holds at least `steps` steps.
std::int64_t waitForSteps(const QString &path, std::int64_t steps, int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < timeoutMs) {
        try {
            RunFile f(path.toStdString());
            const std::int64_t n = f.stats().steps;
            if (n >= steps)
                return n;
        } catch (const RunFileError &) {
        }
        QThread::msleep(20);
    }
    return -1;
}

}  // namespace

class TestRunFile : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void scenarioRoundTrip_data();
    void scenarioRoundTrip();
    void controlChangesRoundTrip();
    void modelRoundTrip();
    void nonFiniteValuesRoundTrip();
    void killedWriterLeavesReadableFile();
    void followSeesAnotherProcessWrite();
    void playerWaitsForASlowObserver();
    void badFiles_data();
    void badFiles();
    void corpusOfBrokenFiles_data();
    void corpusOfBrokenFiles();
    void unwritablePathFailsAtOnce();
    void exportWritesCsv();

private:
    QString file(const QString &name) const { return dir_.filePath(name); }
    QTemporaryDir dir_;
};

void TestRunFile::scenarioRoundTrip_data()
{
    QTest::addColumn<QString>("scenario");
    for (const ScenarioInfo &s : scenarios())
        QTest::newRow(s.id.c_str()) << QString::fromStdString(s.id);
}

void TestRunFile::scenarioRoundTrip()
{
    QFETCH(QString, scenario);
    RunConfig config;
    config.scenario = scenario.toStdString();
    config.steps = 40;
    const QString path = file(scenario + ".nsrun");
    const auto live = recordRun(config, path.toStdString());
    QVERIFY2(live->summary.error.empty(), live->summary.error.c_str());
    QVERIFY(!live->records.empty());
    RunFile f(path.toStdString());
    compareRun(*live, f);
    compareViewWithRecords(path, live->records);
    QCOMPARE(f.info().scenario, config.scenario);
    QCOMPARE(f.info().formatVersion, kRunFileFormatVersion);
    QCOMPARE(f.info().config.steps, 40);
    QVERIFY(!QFile::exists(path + "-wal"));  // closed: one self-contained file
}

void TestRunFile::controlChangesRoundTrip()
{
    RunConfig config;
    config.scenario = "large-lr-mse";
    config.steps = 60;
    Controls c = initialControls(config);
    c.pauseOnNonFinite = false;
    config.controls = c;
    const QString path = file("controls.nsrun");
    const auto live = recordRun(config, path.toStdString(), [&](Session &session) {
        Controls changed = c;
        changed.learningRate = 0.001;
        changed.clipNorm = 1.0;
        session.setControls(changed);
    });
    int changes = 0;
    for (const Event &e : live->events)
        changes += e.kind == EventKind::ControlChange ? 1 : 0;
    QCOMPARE(changes, 1);
    RunFile f(path.toStdString());
    compareRun(*live, f);
    for (const Event &e : f.readEvents(0))
        if (e.kind == EventKind::ControlChange) {
            QCOMPARE(e.changes.size(), std::size_t(2));
            QCOMPARE(e.changes[0].control, std::string("lr"));
            QCOMPARE(e.changes[0].after, std::string("0.001"));
            QCOMPARE(e.changes[1].control, std::string("clip"));
            QCOMPARE(e.changes[1].before, std::string("off"));
        }
}

void TestRunFile::modelRoundTrip()
{
    const std::string model = file("forward-nan.pt").toStdString();
    fixtures::writeModel("forward-nan", model);
    RunConfig config;
    config.modelPath = model;
    config.inputShape = {8, 4};
    config.steps = 20;
    const QString path = file("model.nsrun");
    const auto live = recordRun(config, path.toStdString());
    QVERIFY2(live->summary.error.empty(), live->summary.error.c_str());
    RunFile f(path.toStdString());
    compareRun(*live, f);
    QCOMPARE(f.info().modelPath, model);
    QCOMPARE(f.info().modelSha256.size(), std::size_t(64));
    QCOMPARE(f.info().modelSha256, fileSha256(model));
    QVERIFY(f.info().scenario.empty());
    QCOMPARE(f.info().config.inputShape, config.inputShape);
}

// Values no real step may have produced in this mix: the encoding keeps each of them.
void TestRunFile::nonFiniteValuesRoundTrip()
{
    PushedRunSource source;
    const QString path = file("values.nsrun");
    RunRecorder recorder(path.toStdString());
    source.addObserver(&recorder);
    std::vector<Layer> layers{{0, "", "Net", -1}, {1, "fc", "Linear", 0}};
    RunConfig config;
    config.scenario = "pushed";
    source.beginRun(7, layers, config);
    std::vector<StepRecordPtr> pushed;
    // A double no float holds (1e-310), a float's own subnormal, the largest float, -0.0.
    const double values[] = {kNaN, kInf, -kInf, 0.0, -0.0, 1e-310, 3.4028234663852886e38, double(-1e-40f)};
    for (int i = 0; i < 8; ++i) {
        auto r = std::make_shared<StepRecord>();
        r->run = 7;
        r->step = i;
        r->loss = values[i];
        r->gradNorm = values[(i + 1) % 8];
        r->gradNormClipped = values[(i + 2) % 8];
        r->learningRate = values[(i + 3) % 8];
        r->lossScale = values[(i + 4) % 8];
        r->stepMillis = 0.25 * i;
        r->layers.resize(2);
        TensorHealth &h = r->layers[1].forward;
        h.present = true;
        h.numel = 100;
        h.nan = i;
        h.posInf = 2 * i;
        h.negInf = 3 * i;
        if (i % 2 == 0) {  // else no finite element: min and max stay NaN
            h.min = std::isnan(values[(i + 5) % 8]) ? -2.0 : values[(i + 5) % 8];
            h.max = i == 4 ? 0.1 : 7.0;  // 0.1: no float holds it exactly
            h.absMax = std::fmax(std::fabs(h.min), std::fabs(h.max));
        }
        h.finiteL2 = i == 3 ? kInf : 1.0 + i;
        r->layers[1].inputFinite = i % 3 != 0;
        r->layers[0].grad.present = true;
        r->layers[0].grad.numel = 3;
        r->layers[0].grad.finiteL2 = 0.0;
        r->inputHealth = h;
        if (i == 4) {
            r->origin.step = 4;
            r->origin.phase = Phase::Backward;
            r->origin.layer = 1;
            r->origin.layerPath = "fc";
            r->origin.op = "SqrtBackward0";
            r->origin.produced = true;
            r->origin.explanation = "sqrt's gradient at 0, with a comma, and \"quotes\"";
            r->badSamples = {3, 9};
            r->quarantined = {9};
            r->overflowLayers = {1};
            r->skipped = true;
            r->why = "overflow";
        }
        source.pushStep(r);
        pushed.push_back(r);
    }
    recorder.close();
    RunFile f(path.toStdString());
    const auto read = readAll(f);
    QCOMPARE(read.size(), pushed.size());
    for (std::size_t i = 0; i < read.size(); ++i) {
        const QString d = diffRecord(*pushed[i], *read[i]);
        QVERIFY2(d.isEmpty(), qPrintable(d));
    }
    QVERIFY(std::isnan(read[0]->loss));
    QCOMPARE(read[1]->loss, kInf);
    QCOMPARE(read[2]->loss, -kInf);
    QVERIFY(std::signbit(read[4]->loss));  // -0.0 stays -0.0
    QVERIFY(!f.info().finished);           // no summary was ever written
    compareViewWithRecords(path, pushed);

    // CSV spells non-finite numbers as pandas and spreadsheets read them, and keeps every digit.
    std::ostringstream csv;
    QCOMPARE(writeRunCsv(f, csv), std::int64_t(8));
    const QStringList rows = QString::fromStdString(csv.str()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(rows.size(), 9);
    QVERIFY2(rows[1].startsWith("0,NaN,inf,-inf,0,-0,"), qPrintable(rows[1]));
    QVERIFY2(rows[7].startsWith("6,3.4028234663852886e+38,"), qPrintable(rows[7]));
    QVERIFY2(rows[5].contains(",overflow,") && rows[5].endsWith(",backward,fc,SqrtBackward0,3 9,9"),
             qPrintable(rows[5]));

    // The same values through SQL, as anyone reads them: NULL is NaN, Inf is Inf.
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt *s = nullptr;
    QCOMPARE(sqlite3_prepare_v2(db, "SELECT loss FROM steps ORDER BY step LIMIT 3", -1, &s, nullptr), SQLITE_OK);
    QCOMPARE(sqlite3_step(s), SQLITE_ROW);
    QCOMPARE(sqlite3_column_type(s, 0), SQLITE_NULL);
    QCOMPARE(sqlite3_step(s), SQLITE_ROW);
    QCOMPARE(sqlite3_column_double(s, 0), kInf);
    QCOMPARE(sqlite3_step(s), SQLITE_ROW);
    QCOMPARE(sqlite3_column_double(s, 0), -kInf);
    sqlite3_finalize(s);
    QCOMPARE(sqlite3_prepare_v2(db,
                                "SELECT nan, posinf, neginf, absmax FROM layer_health WHERE step = 2 AND layer = 1 "
                                "AND kind = 'forward'",
                                -1, &s, nullptr),
             SQLITE_OK);
    QCOMPARE(sqlite3_step(s), SQLITE_ROW);
    QCOMPARE(sqlite3_column_int(s, 0), 2);
    QCOMPARE(sqlite3_column_int(s, 1), 4);
    QCOMPARE(sqlite3_column_int(s, 2), 6);
    QCOMPARE(sqlite3_column_double(s, 3), pushed[2]->layers[1].forward.absMax);
    sqlite3_finalize(s);
    sqlite3_close(db);
}

void TestRunFile::killedWriterLeavesReadableFile()
{
    const QString path = file("killed.nsrun");
    QProcess child;
    child.setStandardOutputFile(QProcess::nullDevice());
    child.setStandardErrorFile(QProcess::nullDevice());
    child.start(NANSCOPE_EXE, {"run", "--scenario", "safe-training", "--steps", "1000000", "--record", path});
    QVERIFY(child.waitForStarted());
    QVERIFY(waitForSteps(path, 20, 60000) >= 20);
    QThread::msleep(1500);
    const std::int64_t beat = RunFile(path.toStdString()).info().heartbeat;
    QVERIFY(beat >= 1);  // the writer's heartbeat goes up while it lives
    const std::int64_t committedBefore = RunFile(path.toStdString()).stats().steps;
    QThread::msleep(1100);  // the kill comes a second after the count
    child.kill();           // SIGKILL
    QVERIFY(child.waitForFinished());
    QCOMPARE(child.exitStatus(), QProcess::CrashExit);

    RunFile f(path.toStdString());
    const RunFileStats st = f.stats();
    QVERIFY2(st.steps >= committedBefore, qPrintable(QString("%1 < %2").arg(st.steps).arg(committedBefore)));
    QVERIFY(st.steps > committedBefore);  // the writer kept committing in that second
    QCOMPARE(st.firstStep, 0);
    QCOMPARE(st.lastStep, int(st.steps - 1));  // no hole
    QVERIFY(!f.info().finished);

    const auto report = nanscope::testing::run({"report", path, "--json"});
    QCOMPARE(report.code, 0);
    QCOMPARE(report.objects.size(), 1);
    QCOMPARE(report.objects[0]["finished"].toBool(true), false);
    QCOMPARE(report.objects[0]["steps_run"].toInt(), int(st.steps));
    const auto text = nanscope::testing::run({"report", path});
    QVERIFY(text.out.contains("did not finish"));

    // Followed, the file of a dead writer ends as unfinished once its heartbeat stood still.
    RecordedRunOptions options;
    options.pollMs = 50;
    options.writerGoneMs = 1500;
    RecordedRun followed(path.toStdString(), options);
    RunCollector c;
    followed.addObserver(&c);
    QElapsedTimer t;
    t.start();
    followed.start();
    QVERIFY(followed.wait(30000));
    followed.removeObserver(&c);
    QVERIFY(t.elapsed() >= 1500);
    QCOMPARE(std::int64_t(c.records.size()), st.steps);
    QVERIFY(!c.summary.finished);
    QCOMPARE(c.summary.stepsRun, int(st.steps));
    QVERIFY(!c.events.empty());
    QVERIFY(QString::fromStdString(c.events.back().text).contains("stopped without finishing"));
}

void TestRunFile::followSeesAnotherProcessWrite()
{
    const QString path = file("followed.nsrun");
    const int steps = 3000;
    QProcess child;
    child.setStandardOutputFile(QProcess::nullDevice());
    child.start(NANSCOPE_EXE,
                {"run", "--scenario", "safe-training", "--steps", QString::number(steps), "--record", path, "--json"});
    QVERIFY(child.waitForStarted());
    QVERIFY(waitForSteps(path, 0, 60000) >= 0);
    RecordedRunOptions options;
    options.pollMs = 50;
    RecordedRun run(path.toStdString(), options);
    const std::int64_t atOpen = RunFile(path.toStdString()).stats().steps;
    RunCollector c;
    run.addObserver(&c);
    run.start();
    QVERIFY(run.wait(120000));
    run.removeObserver(&c);
    QVERIFY(child.waitForFinished(60000));
    QCOMPARE(child.exitCode(), 0);

    QVERIFY2(atOpen < steps, "the child finished before the reader opened the file");
    QCOMPARE(int(c.records.size()), steps);
    for (int i = 0; i < steps; ++i)
        QCOMPARE(c.records[std::size_t(i)]->step, i);
    QVERIFY(c.summary.finished);
    QCOMPARE(c.summary.stepsRun, steps);
    QCOMPARE(c.states.front(), SessionState::Running);
    QCOMPARE(c.states.back(), SessionState::Finished);
}

// An observer that takes nothing in: the player stops handing it records at the backlog limit.
struct SlowObserver final : RunObserver {
    std::atomic<std::size_t> held{0};
    std::atomic<bool> draining{false};
    void stepRecorded(const StepRecordPtr &) override
    {
        if (!draining)
            ++held;
    }
    std::size_t backlog() const override { return draining ? 0 : held.load(); }
};

void TestRunFile::playerWaitsForASlowObserver()
{
    const QString path = file("slow.nsrun");
    RunConfig config;
    config.scenario = "large-lr-mse";  // 4 layers
    config.steps = 3000;
    recordRun(config, path.toStdString());
    RecordedRunOptions options;
    options.follow = false;
    options.stepsPerRead = 100;
    options.maxBacklogLayerSteps = 1500 * 4;  // 1500 records of 4 layers
    RecordedRun run(path.toStdString(), options);
    SlowObserver slow;
    run.addObserver(&slow);
    run.start();
    QVERIFY2(!run.wait(500), qPrintable(QString("held %1").arg(slow.held.load())));  // held back
    QVERIFY2(slow.held >= 1500 && slow.held < 1500 + 2 * 100, qPrintable(QString::number(slow.held.load())));
    slow.draining = true;  // it catches up: the rest comes
    QVERIFY(run.wait(30000));
    run.removeObserver(&slow);
}

void TestRunFile::badFiles_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("cause");
    QTest::newRow("missing") << "missing"
                             << "no such file";
    QTest::newRow("folder") << "folder"
                            << "is a folder";
    QTest::newRow("empty") << "empty"
                           << "empty";
    QTest::newRow("text") << "text"
                          << "not a NaNScope run file";
    QTest::newRow("other sqlite database") << "other-db"
                                           << "not a NaNScope run file";
    QTest::newRow("truncated") << "truncated"
                               << "damaged";
    QTest::newRow("corrupted pages") << "corrupted"
                                     << "damaged";
    QTest::newRow("newer version") << "newer"
                                   << "newer NaNScope";
    QTest::newRow("locked by a writer") << "locked"
                                        << "locked";
}

void TestRunFile::badFiles()
{
    QFETCH(QString, kind);
    QFETCH(QString, cause);
    // A real run file to break.
    const QString good = file("good.nsrun");
    if (!QFile::exists(good)) {
        RunConfig config;
        config.scenario = "safe-training";
        config.steps = 60;
        recordRun(config, good.toStdString());
    }
    const QString path = file("bad-" + kind + ".nsrun");
    const QByteArray bytes = bytesOf(good);
    QVERIFY(bytes.size() > 16 * 4096);
    sqlite3 *lock = nullptr;
    if (kind == "folder") {
        QVERIFY(QDir().mkpath(path));
    } else if (kind == "empty") {
        writeBytes(path, {});
    } else if (kind == "text") {
        writeBytes(path, "step,loss\n0,1.5\n");
    } else if (kind == "other-db") {
        sqlite3 *db = nullptr;
        sqlite3_open(path.toUtf8().constData(), &db);
        sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr);
        sqlite3_close(db);
    } else if (kind == "truncated") {
        writeBytes(path, bytes.left(bytes.size() / 2));
    } else if (kind == "corrupted") {
        QByteArray broken = bytes;
        for (int i = 3 * 4096; i < broken.size(); ++i)
            broken[i] = char(0xA5 ^ (i * 31));
        writeBytes(path, broken);
    } else if (kind == "newer" || kind == "locked") {
        writeBytes(path, bytes);
        sqlite3_open(path.toUtf8().constData(), &lock);
        if (kind == "newer") {
            QCOMPARE(sqlite3_exec(lock, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
            sqlite3_close(lock);
            lock = nullptr;
        } else {
            QCOMPARE(sqlite3_exec(lock, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
        }
    }

    // The reader: a RunFileError that names the file and the cause, whatever is read.
    QString message;
    try {
        RunFile f(path.toStdString());
        readAll(f);
        f.readEvents(0);
    } catch (const RunFileError &e) {
        message = QString::fromStdString(e.what());
    }
    QVERIFY2(message.startsWith(path + ": "), qPrintable(message));
    QVERIFY2(message.contains(cause), qPrintable(message));
    QVERIFY(!message.contains('\n'));

    // The command line: one line on stderr, exit 1.
    const auto report = nanscope::testing::run({"report", path});
    QCOMPARE(report.code, 1);
    QVERIFY2(report.err.startsWith("nanscope: " + path + ": "), qPrintable(report.err));
    QCOMPARE(report.err.count('\n'), 1);
    if (lock) {
        sqlite3_exec(lock, "ROLLBACK", nullptr, nullptr, nullptr);
        sqlite3_close(lock);
    }
    if (kind != "missing" && kind != "folder" && kind != "newer" && kind != "locked") {
        // Opening never wrote to the file.
        const QByteArray after = bytesOf(path);
        QVERIFY(kind == "empty" ? after.isEmpty() : !after.isEmpty());
    }
}

// The fuzzer's seeds (tests/data/run-files): bad-* are refused with one line, good-* are read,
// whatever odd values they hold.
void TestRunFile::corpusOfBrokenFiles_data()
{
    QTest::addColumn<QString>("path");
    const QDir corpus(NANSCOPE_RUN_FILE_CORPUS);
    const QStringList files = corpus.entryList({"*.nsrun"}, QDir::Files, QDir::Name);
    QVERIFY(files.size() >= 8);
    for (const QString &f : files)
        QTest::newRow(qPrintable(f)) << corpus.filePath(f);
}

void TestRunFile::corpusOfBrokenFiles()
{
    QFETCH(QString, path);
    // A copy: the reader must not need to write, and the corpus must stay as committed.
    const QString copy = file("corpus-" + QFileInfo(path).fileName());
    QFile::remove(copy);
    QVERIFY(QFile::copy(path, copy));
    const bool good = QFileInfo(path).fileName().startsWith("good-");
    QString message;
    try {
        RunFile f(copy.toStdString());
        readAll(f);
        f.readEvents(0);
    } catch (const RunFileError &e) {
        message = QString::fromStdString(e.what());
    }
    QCOMPARE(message.isEmpty(), good);
    const auto report = nanscope::testing::run({"report", copy});
    QCOMPARE(report.code, good ? 0 : 1);
    if (!good) {
        QVERIFY2(report.err.startsWith("nanscope: " + copy + ": "), qPrintable(report.err));
        QCOMPARE(report.err.count('\n'), 1);
    }
    QCOMPARE(bytesOf(copy), bytesOf(path));  // reading wrote nothing
}

void TestRunFile::unwritablePathFailsAtOnce()
{
    const QString path = file("no-such-folder/run.nsrun");
    QString message;
    try {
        RunRecorder recorder(path.toStdString());
    } catch (const RunFileError &e) {
        message = QString::fromStdString(e.what());
    }
    QVERIFY2(message.startsWith(path + ": "), qPrintable(message));
    const auto run = nanscope::testing::run({"run", "--scenario", "large-lr-mse", "--steps", "3", "--record", path});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains("cannot record the run"), qPrintable(run.err));
    QVERIFY(run.out.isEmpty() || !run.out.contains("== report =="));
}

void TestRunFile::exportWritesCsv()
{
    const QString path = file("export.nsrun");
    RunConfig config;
    config.scenario = "nan-input";
    config.steps = 12;
    const auto live = recordRun(config, path.toStdString());
    const QString csv = file("steps.csv"), layers = file("layers.csv");
    QCOMPARE(nanscope::testing::run({"export", path, "--csv", csv}).code, 0);
    QCOMPARE(nanscope::testing::run({"export", path, "--csv", layers, "--layers"}).code, 0);
    const QStringList rows = QString::fromUtf8(bytesOf(csv)).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(rows.size(), 1 + 12);
    QVERIFY(rows[0].startsWith("step,loss,grad_norm,"));
    QVERIFY(rows[1].startsWith("0,"));
    QCOMPARE(rows[1].section(',', 11, 11), QString("input"));  // origin_phase of the first step
    int expected = 0;
    for (const StepRecordPtr &r : live->records)
        for (const LayerHealth &lh : r->layers)
            expected +=
                int(lh.forward.present) + int(lh.grad.present) + int(lh.params.present) + int(lh.paramGrads.present);
    const QStringList layerRows = QString::fromUtf8(bytesOf(layers)).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(layerRows.size(), 1 + expected);
    const auto bad = nanscope::testing::run({"export", file("none.nsrun"), "--csv", csv});
    QCOMPARE(bad.code, 1);
}

QTEST_GUILESS_MAIN(TestRunFile)
#include "tst_run_file.moc"
