// One format, every reader: a file of each earlier layout still opens and reads as it was written;
// `run --json` and the file's run.summary are one schema, compared key by key; each step carries
// the precision it ran in.
#include "cli_runner.h"
#include "record_compare.h"
#include "run_file_helpers.h"
#include "sql_helpers.h"

#include "nanscope/run_file.h"

#include <sqlite3.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace nanscope;
using namespace nanscope::testing;

namespace {

// What a layout lacks, as the readers must make up for it.
enum Lacks { Nothing = 0, StepPrecision = 1, UpdateRatios = 2, EventMessages = 4 };

QJsonObject fileSummary(const QString &path)
{
    sqlite3 *db = nullptr;
    sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt *s = nullptr;
    QJsonObject out;
    if (sqlite3_prepare_v2(db, "SELECT summary FROM run", -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        out = QJsonDocument::fromJson(QByteArray(reinterpret_cast<const char *>(sqlite3_column_text(s, 0)))).object();
    sqlite3_finalize(s);
    sqlite3_close(db);
    return out;
}

// The summary as format 1 wrote it: per-layer counts an array by layer id, the origin's layer an
// id with its path beside it, no step as -1, no error as "", no `finished`.
QJsonObject formatOneSummary(QJsonObject s, const std::vector<Layer> &layers)
{
    QJsonArray counts;
    const QJsonObject perLayer = s.value("nonfinite_steps_per_layer").toObject();
    for (const Layer &l : layers)
        counts.append(perLayer.value(QString::fromStdString(l.path)).toInt(0));
    s["nonfinite_steps_per_layer"] = counts;
    QJsonObject origin = s.value("origin").toObject();
    origin["layer_path"] = origin.value("layer").isNull() ? QString() : origin.value("layer").toString();
    origin["layer"] = origin.value("layer_id").isNull() ? -1 : origin.value("layer_id").toInt();
    origin.remove("layer_id");
    for (const char *key : {"op", "source", "chain"})
        if (origin.value(key).isNull())
            origin[key] = QString();
    s["origin"] = origin;
    if (s.value("first_nonfinite_step").isNull())
        s["first_nonfinite_step"] = -1;
    s["error"] = QString();
    s.remove("finished");
    return s;
}

}  // namespace

class TestRunFileLayouts : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void eachEarlierLayoutOpens_data();
    void eachEarlierLayoutOpens();
    void runJsonSummaryIsTheFileSummary_data();
    void runJsonSummaryIsTheFileSummary();

private:
    QString file(const QString &name) const { return dir_.filePath(name); }
    QTemporaryDir dir_;
    QString recorded_;
    std::unique_ptr<RunCollector> live_;
};

// large-lr-mse in fp32 until it pauses on its first non-finite step, then continued in fp16
// (emulated on the CPU) without pausing: a run whose first non-finite value is born in a layer,
// with per-layer counts and two precisions, the change at a step known in advance.
void TestRunFileLayouts::initTestCase()
{
    QVERIFY(dir_.isValid());
    recorded_ = file("current.nsrun");
    RunConfig config = scenario("large-lr-mse", 40);
    Controls c = initialControls(config);
    c.pauseOnNonFinite = true;
    config.controls = c;
    live_ = recordRun(config, recorded_.toStdString(), [&](Session &session) {
        QTRY_VERIFY_WITH_TIMEOUT(session.state() == SessionState::Paused, 120000);
        Controls fp16 = c;
        fp16.precision = Precision::FP16;
        fp16.pauseOnNonFinite = false;
        session.setControls(fp16);
        session.decidePausedStep(PausedStepDecision::Continue);
    });
    QVERIFY2(live_->summary.error.empty(), live_->summary.error.c_str());
    QCOMPARE(live_->summary.stepsRun, 40);
    QVERIFY(live_->summary.origin.layer > 0);
    QCOMPARE(live_->records.front()->precision, Precision::FP32);
    QCOMPARE(live_->records.back()->precision, Precision::FP16);
}

void TestRunFileLayouts::eachEarlierLayoutOpens_data()
{
    QTest::addColumn<QString>("sql");
    QTest::addColumn<bool>("oldSummary");
    QTest::addColumn<int>("lacks");
    const QString versionThreeColumns = "ALTER TABLE steps DROP COLUMN layer_detail; ALTER TABLE run DROP COLUMN keep; "
                                        "DROP TABLE coarse_chunks; DROP TABLE coarse_chunk_series; "
                                        "DROP TABLE coarse_chunk_layers;";
    const QString formatTwo = versionThreeColumns + "PRAGMA user_version = 2; UPDATE run SET format_version = 2;";
    const QString formatOne = versionThreeColumns + "ALTER TABLE steps DROP COLUMN precision; PRAGMA user_version = 1; "
                              "UPDATE run SET format_version = 1;";
    const QString noRankColumns = "ALTER TABLE run DROP COLUMN rank; ALTER TABLE run DROP COLUMN world_size;";
    const QString noCapsules = "DROP TABLE capsules; DROP TABLE embedded_files;";
    // The views name update_ratio: the first release's views did not, as its table had none.
    QString noUpdateRatios = "DROP VIEW layer_health; DROP VIEW layer_steps_decoded; "
                             "ALTER TABLE layer_steps DROP COLUMN update_ratio; "
                             "ALTER TABLE chunk_layers DROP COLUMN update_ratio;";
    for (const char *kind : {"forward", "grad", "params", "param_grads"})
        noUpdateRatios += QString(" ALTER TABLE chunk_layers DROP COLUMN %1_norm;").arg(kind);
    const QString noChunks = "DROP TABLE chunks; DROP TABLE chunk_series; DROP TABLE chunk_layers;";
    const QString noMessages = "ALTER TABLE events DROP COLUMN message;";
    const QString formatOneFile = noMessages + formatOne;  // version 1 never had event messages
    const int oldest = StepPrecision | EventMessages;

    QTest::newRow("current (3)") << QString() << false << int(Nothing);
    QTest::newRow("2") << formatTwo << false << int(Nothing);
    QTest::newRow("2 with a format 1 summary") << formatTwo << true << int(Nothing);
    QTest::newRow("2 before event messages") << formatTwo + noMessages << false << int(EventMessages);
    QTest::newRow("1") << formatOneFile << true << oldest;
    QTest::newRow("1 before rank columns") << formatOneFile + noRankColumns << true << oldest;
    QTest::newRow("1 before capsules, update ratios")
        << formatOneFile + noRankColumns + noCapsules + noUpdateRatios << true << int(oldest | UpdateRatios);
    QTest::newRow("1 before chunks") << formatOneFile + noRankColumns + noCapsules + noUpdateRatios + noChunks << true
                                     << int(oldest | UpdateRatios);
}

void TestRunFileLayouts::eachEarlierLayoutOpens()
{
    QFETCH(QString, sql);
    QFETCH(bool, oldSummary);
    QFETCH(int, lacks);
    const QString path = file(QString("layout-%1.nsrun").arg(QTest::currentDataTag()));
    QFile::remove(path);
    QVERIFY(QFile::copy(recorded_, path));
    QFile(path).setPermissions(QFile::ReadOwner | QFile::WriteOwner);
    if (!sql.isEmpty())
        QCOMPARE(execSql(path, sql), QString());
    if (oldSummary) {
        const QJsonObject old = formatOneSummary(fileSummary(path), live_->layers);
        const QString text = QString::fromUtf8(QJsonDocument(old).toJson(QJsonDocument::Compact)).replace("'", "''");
        QCOMPARE(execSql(path, "UPDATE run SET summary = '" + text + "'"), QString());
    }

    RunFile f(path.toStdString());
    const auto read = readAll(f);
    QCOMPARE(read.size(), live_->records.size());
    for (std::size_t i = 0; i < read.size(); ++i) {
        StepRecord expected = *live_->records[i];
        if (lacks & StepPrecision)  // steps before the column: the precision the run started in
            expected.precision = Precision::FP32;
        if (lacks & UpdateRatios)
            for (LayerHealth &lh : expected.layers)
                lh.updateRatio = std::nan("");
        const QString d = diffRecord(expected, *read[i]);
        QVERIFY2(d.isEmpty(), qPrintable(d));
    }
    const QString differs = diffSummary(live_->summary, f.info().summary);
    QVERIFY2(differs.isEmpty(), qPrintable(differs));
    const auto events = f.readEvents(0);
    QCOMPARE(events.size(), live_->events.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
        Event expected = live_->events[i];
        if (lacks & EventMessages)  // the English text alone, as it was recorded
            expected.message = {};
        QVERIFY2(diffEvent(expected, events[i]).isEmpty(), qPrintable(diffEvent(expected, events[i])));
    }
}

void TestRunFileLayouts::runJsonSummaryIsTheFileSummary_data()
{
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<QString>("originLayer");  // the summary's origin.layer; "-": none (the input, the loss)
    QTest::newRow("born in a layer") << "large-lr-mse" << "fc2";
    QTest::newRow("in the data") << "nan-input" << "-";
    QTest::newRow("in the loss") << "log-zero" << "-";
}

void TestRunFileLayouts::runJsonSummaryIsTheFileSummary()
{
    QFETCH(QString, scenario);
    QFETCH(QString, originLayer);
    const QString path = file(scenario + "-json.nsrun");
    const Output o = run({"run", "--scenario", scenario, "--steps", "16", "--json", "--record", path});
    QCOMPARE(o.code, 0);
    QJsonObject printed;
    for (const QJsonObject &j : o.objects)
        if (j.value("type") == QLatin1String("summary"))
            printed = j;
    QCOMPARE(printed.value("type").toString(), QStringLiteral("summary"));
    printed.remove("type");
    const QJsonObject stored = fileSummary(path);
    // The keys docs/run-file.md lists, in its order: a key added or renamed on one side fails here.
    const QStringList keys{"source",
                           "steps_run",
                           "finished",
                           "error",
                           "first_nonfinite_step",
                           "origin",
                           "nonfinite_steps",
                           "nonfinite_steps_per_layer",
                           "quarantined_samples",
                           "rollbacks",
                           "skipped_steps",
                           "scaler_skipped_steps",
                           "final_loss_scale",
                           "precision",
                           "optimizer",
                           "final_learning_rate",
                           "steps_per_second",
                           "stopped_by_policy",
                           "final_state_finite",
                           "challenge"};
    QCOMPARE(QStringList(stored.keys()).size(), keys.size());
    for (const QString &key : keys) {
        QVERIFY2(stored.contains(key), qPrintable("the file's summary lacks " + key));
        QVERIFY2(printed.contains(key), qPrintable("run --json's summary lacks " + key));
        QVERIFY2(printed.value(key) == stored.value(key),
                 qPrintable(key + ": " + QJsonDocument(QJsonObject{{"printed", printed.value(key)}}).toJson() +
                            QJsonDocument(QJsonObject{{"stored", stored.value(key)}}).toJson()));
    }
    QCOMPARE(printed.size(), stored.size());
    QCOMPARE(stored.value("source").toString(), scenario);
    QVERIFY(stored.value("error").isNull());
    QVERIFY(stored.value("finished").toBool());
    const QJsonObject origin = stored.value("origin").toObject();
    if (originLayer == "-") {
        QVERIFY(origin.value("layer").isNull());
        QVERIFY(origin.value("layer_id").isNull());
    } else {
        QCOMPARE(origin.value("layer").toString(), originLayer);
        // Its id is the layers table's, and the per-layer counts name it by path.
        RunFile f(path.toStdString());
        const int id = origin.value("layer_id").toInt(-1);
        QVERIFY(id > 0 && id < int(f.layers().size()));
        QCOMPARE(QString::fromStdString(f.layers()[std::size_t(id)].path), originLayer);
        QVERIFY(stored.value("nonfinite_steps_per_layer").toObject().value(originLayer).toInt() > 0);
    }
}

QTEST_GUILESS_MAIN(TestRunFileLayouts)
#include "tst_run_file_layouts.moc"
