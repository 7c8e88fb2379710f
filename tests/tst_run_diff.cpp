// `nanscope diff`: two runs recorded by the command line, compared as a user would, and the
// measured parting step, layer and kind of health checked against what differs between them.
#include "rank_processes.h"
#include "torchscript_fixtures.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>

using namespace nanscope::testing;

class TestRunDiff : public QObject {
    Q_OBJECT

private slots:
    void twoRunsPartWhereTheyDiffer_data();
    void twoRunsPartWhereTheyDiffer();
    void oneWeightChangedPartsInItsLayer();
    void twoRanksPartInForwardWithParametersIdentical();
    void modelsWithOtherLayersAreComparedOnTheLayersTheyShare();
    void badFilesAndArgumentsSayWhyInOneLine_data();
    void badFilesAndArgumentsSayWhyInOneLine();

private:
    QString path(const QString &name) const { return dir_.filePath(name); }
    // Records `args` (a `run` line without --record) once per name.
    QString recorded(const QString &name, const QStringList &args);
    QJsonObject diff(const QStringList &args);
    QTemporaryDir dir_;
};

QString TestRunDiff::recorded(const QString &name, const QStringList &args)
{
    const QString file = path(name + ".nsrun");
    if (!QFile::exists(file)) {
        const Finished f = runNanscope(QStringList{"run"} + args + QStringList{"--record", file});
        if (f.code != 0)
            qWarning("nanscope run %s: %s", qPrintable(args.join(' ')), qPrintable(f.err));
    }
    return file;
}

QJsonObject TestRunDiff::diff(const QStringList &args)
{
    const Finished f = runNanscope(QStringList{"diff"} + args + QStringList{"--json"});
    if (f.code != 0 || f.objects.size() != 1) {
        qWarning("nanscope diff %s exited %d: %s", qPrintable(args.join(' ')), f.code, qPrintable(f.err));
        return {};
    }
    return f.objects[0];
}

namespace {

QJsonObject settingNamed(const QJsonObject &diff, const QString &key)
{
    for (const QJsonValue &s : diff["settings"].toArray())
        if (s["key"].toString() == key)
            return s.toObject();
    return {};
}

}  // namespace

void TestRunDiff::twoRunsPartWhereTheyDiffer_data()
{
    QTest::addColumn<QStringList>("a");
    QTest::addColumn<QStringList>("b");
    QTest::addColumn<QString>("setting");  // the key the settings list must name; empty: none differ
    QTest::addColumn<int>("partsAt");      // -1: identical
    QTest::addColumn<QString>("what");
    QTest::addColumn<bool>("aFails");
    QTest::addColumn<bool>("bFails");
    const QStringList mse{"--scenario", "large-lr-mse", "--steps", "8", "--seed", "3"};  // lr 1: NaN at step 6, lr 0.5: at 9
    // The same weights and batches: the first update differs, so step 0 is the same bit for bit
    // and step 1's parameters, and so its forward, are not.
    QTest::newRow("lr 1 against lr 0.5") << (mse + QStringList{"--lr", "1"}) << (mse + QStringList{"--lr", "0.5"})
                                         << "controls.learning_rate" << 1 << "forward" << true << false;
    QTest::newRow("the same run twice") << mse << mse << "" << -1 << "" << true << true;
    const QStringList stable{"--scenario", "large-lr-ce", "--steps", "3", "--seed", "2"};
    QTest::newRow("fp32 against bf16") << stable << (stable + QStringList{"--precision", "bf16"})
                                       << "controls.precision" << 0 << "forward" << false << false;
}

void TestRunDiff::twoRunsPartWhereTheyDiffer()
{
    QFETCH(QStringList, a);
    QFETCH(QStringList, b);
    QFETCH(QString, setting);
    QFETCH(int, partsAt);
    QFETCH(QString, what);
    QFETCH(bool, aFails);
    QFETCH(bool, bFails);
    const QString tag = QString::fromUtf8(QTest::currentDataTag()).replace(' ', '-');
    const QJsonObject d = diff({recorded(tag + "-a", a), recorded(tag + "-b", b)});
    QCOMPARE(d["type"].toString(), QString("diff"));
    QCOMPARE(d["identical"].toBool(), partsAt < 0);
    QCOMPARE(d["a"]["steps"].toInt(), d["steps_compared"].toInt());
    if (setting.isEmpty())
        QCOMPARE(d["settings"].toArray().size(), 0);
    else
        QVERIFY2(!settingNamed(d, setting).isEmpty(), qPrintable(QJsonDocument(d).toJson()));
    if (partsAt < 0) {
        QVERIFY(d["parting"].isNull());
    } else {
        QCOMPARE(d["parting"]["step"].toInt(), partsAt);
        QCOMPARE(d["parting"]["what"].toString(), what);
        QVERIFY(!d["parting"]["detail"].toString().isEmpty());
    }
    QCOMPARE(!d["a"]["first_nonfinite_step"].isNull(), aFails);
    QCOMPARE(!d["b"]["first_nonfinite_step"].isNull(), bFails);
    if (aFails && partsAt >= 0)
        QCOMPARE(d["a"]["apart_by_then"].toBool(), d["parting"]["step"].toInt() <= d["a"]["first_nonfinite_step"].toInt());
}

void TestRunDiff::oneWeightChangedPartsInItsLayer()
{
    const std::string original = path("nested.pt").toStdString(), nudged = path("nudged.pt").toStdString();
    nanscope::fixtures::writeModel("nested", original);
    nanscope::fixtures::writeNudgedModel(original, nudged, "blocks.b1.fc2.weight", 0.25);
    const QStringList run{"--input-shape", "8x4", "--steps", "2", "--seed", "5"};
    const QJsonObject d = diff({recorded("nested", QStringList{"--model", path("nested.pt")} + run),
                                recorded("nudged", QStringList{"--model", path("nudged.pt")} + run)});
    QCOMPARE(d["parting"]["step"].toInt(), 0);
    QCOMPARE(d["parting"]["what"].toString(), QString("forward"));
    QCOMPARE(d["parting"]["layer"].toString(), QString("blocks.b1.fc2"));
    QVERIFY(d["parting"]["params_differ"].toBool());
    QVERIFY(!settingNamed(d, "model_sha256").isEmpty());
    QVERIFY(!settingNamed(d, "model").isEmpty());
}

void TestRunDiff::twoRanksPartInForwardWithParametersIdentical()
{
    const QString folder = path("job");
    const Finished job = runNanscope({"run", "--scenario", "large-lr-ce", "--steps", "4", "--ranks", "2", "--record", folder});
    QVERIFY2(job.code == 0, qPrintable(job.err));
    const QJsonObject d = diff({folder, "--ranks", "0,1"});
    QCOMPARE(d["parting"]["step"].toInt(), 0);
    QCOMPARE(d["parting"]["what"].toString(), QString("forward"));  // their shards differ
    QVERIFY(d["parting"]["input_differs"].toBool());
    QVERIFY(d["identical_throughout"]["params"].toBool());  // the job keeps them so
    QVERIFY(!d["identical_throughout"]["forward"].toBool());
    QCOMPARE(settingNamed(d, "rank")["b"].toInt(), 1);
}

void TestRunDiff::modelsWithOtherLayersAreComparedOnTheLayersTheyShare()
{
    const QJsonObject d = diff({recorded("mse", {"--scenario", "large-lr-mse", "--steps", "3"}),
                                recorded("deep", {"--scenario", "exploding-deep", "--steps", "3"})});
    QVERIFY(!d["identical"].toBool());
    QVERIFY(!d["layers_only_in_b"].toArray().isEmpty());
    const Finished text = runNanscope({"diff", path("mse.nsrun"), path("deep.nsrun")});
    QCOMPARE(text.code, 0);
    QVERIFY2(text.out.contains("layers only in b:"), qPrintable(text.out));
}

void TestRunDiff::badFilesAndArgumentsSayWhyInOneLine_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("says");
    QTest::newRow("one file") << QStringList{"a.nsrun"} << 2 << "diff compares two run files";
    QTest::newRow("a bad tolerance") << QStringList{"a.nsrun", "b.nsrun", "--tolerance", "lots"} << 2
                                     << "--tolerance must be a relative difference";
    QTest::newRow("ranks of files") << QStringList{"a.nsrun", "b.nsrun", "--ranks", "0,1"} << 2
                                    << "--ranks R,S compares two ranks of one job";
    QTest::newRow("one rank") << QStringList{"job", "--ranks", "1"} << 2 << "--ranks takes two";
    QTest::newRow("a missing file") << QStringList{"good.nsrun", "missing.nsrun"} << 1 << "missing.nsrun";
    QTest::newRow("a truncated file") << QStringList{"good.nsrun", "truncated.nsrun"} << 1 << "truncated.nsrun";
    QTest::newRow("a newer format") << QStringList{"newer.nsrun", "good.nsrun"} << 1 << "newer";
}

void TestRunDiff::badFilesAndArgumentsSayWhyInOneLine()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, says);
    const QString good = recorded("good", {"--scenario", "large-lr-mse", "--steps", "2"});
    if (!QFile::exists(path("truncated.nsrun"))) {
        QFile in(good), out(path("truncated.nsrun"));
        QVERIFY(in.open(QIODevice::ReadOnly) && out.open(QIODevice::WriteOnly));
        out.write(in.readAll().left(int(in.size() / 3)));
    }
    if (!QFile::exists(path("newer.nsrun"))) {
        QVERIFY(QFile::copy(good, path("newer.nsrun")));
        sqlite3 *db = nullptr;
        QCOMPARE(sqlite3_open(path("newer.nsrun").toUtf8().constData(), &db), SQLITE_OK);
        QCOMPARE(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
        sqlite3_close(db);
    }
    QStringList inDir;
    for (const QString &a : args)
        inDir << (a.endsWith(".nsrun") || a == "job" ? path(a) : a);
    const Finished f = runNanscope(QStringList{"diff"} + inDir);
    QCOMPARE(f.code, code);
    QCOMPARE(f.err.count('\n'), 1);
    QVERIFY2(f.err.contains(says), qPrintable(f.err));
}

QTEST_GUILESS_MAIN(TestRunDiff)
#include "tst_run_diff.moc"
