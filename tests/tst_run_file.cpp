// Run files read back as the live run, bit for bit: every scenario, a model, control changes,
// hand-made values, through the reader and through SQL alone; CSV; a player that waits for its
// observers.
#include "cli_runner.h"
#include "record_compare.h"
#include "run_collector.h"
#include "run_file_helpers.h"
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
#include <limits>
#include <sstream>

using namespace nanscope;
using namespace nanscope::testing;

namespace {

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
    QVERIFY(file.info().finished);
    const QString stored = diffSummary(live.summary, file.info().summary);
    QVERIFY2(stored.isEmpty(), qPrintable(stored));

    // An unfinished file's summary is built from its steps: it agrees with the live one.
    SummaryBuilder builder(file.info(), file.layers().size());
    for (const StepRecordPtr &r : read)
        builder.add(*r);
    for (const Event &e : events)
        builder.add(e);
    const RunSummary &a = live.summary, built = builder.summary();
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
    void exportWritesCsv();
    void playerWaitsForASlowObserver();

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

    // forward(x, mask): the further input's shape and dtype come back, and the run replays.
    const std::string pair = file("two-inputs.pt").toStdString();
    fixtures::writeModel("two-inputs", pair);
    config.modelPath = pair;
    config.sideInputs = {SideInput{{8, 4}, "bool", ""}};
    config.steps = 3;
    const QString pairPath = file("pair.nsrun");
    const auto pairLive = recordRun(config, pairPath.toStdString());
    QVERIFY2(pairLive->summary.error.empty(), pairLive->summary.error.c_str());
    RunFile pf(pairPath.toStdString());
    QCOMPARE(pf.info().config.sideInputs, config.sideInputs);
    QCOMPARE(pf.info().config.output, std::string());
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
        r->layers[1].updateRatio = i % 3 == 0 ? kNaN : 1.5e-3 * (i + 1);  // NaN: no update applied
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
            r->origin.call = 2;  // of a layer that ran three times (format version 4)
            r->origin.calls = 3;
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
    QCOMPARE(rows[0], QStringLiteral("step,loss,grad_norm,grad_norm_clipped,lr,loss_scale,skipped,rolled_back,why,"
                                     "step_ms,origin_phase,origin_layer,origin_op,bad_samples,quarantined,precision,"
                                     "layer_detail,nonfinite"));
    QVERIFY2(rows[5].contains(",overflow,") && rows[5].endsWith(",backward,fc,SqrtBackward0,3 9,9,fp32,nonfinite,1"),
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
    const int phase = rows[0].split(',').indexOf("origin_phase");
    QCOMPARE(rows[1].section(',', phase, phase), QString("input"));  // of the first step
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
    // The player reads up to the bound, however long that takes on a busy machine ...
    QTRY_VERIFY_WITH_TIMEOUT(slow.held >= 1500, 60000);
    // ... and then holds back: no more than the reads already under way (two of 100 steps).
    QVERIFY2(!run.wait(300), qPrintable(QString("held %1").arg(slow.held.load())));
    QVERIFY2(slow.held < 1500 + 2 * 100, qPrintable(QString::number(slow.held.load())));
    slow.draining = true;  // it catches up: the rest comes
    QVERIFY(run.wait(30000));
    run.removeObserver(&slow);
}

QTEST_GUILESS_MAIN(TestRunFile)
#include "tst_run_file.moc"
