// The command line: JSON output parsed back, the executable headless, the bench's one model.
#include "cli.h"
#include "cli_runner.h"
#include "nanscope/run_file.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <sstream>

using namespace nanscope;

namespace {

using testing::Output;
using testing::run;

}  // namespace

class TestCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void scenariosListsEveryId();
    void runJsonReportsTheOrigin();
    void nonFiniteNumbersAreStrings();
    void pausedStepIsReportedSkippedOnce();
    void forecastHorizonIsASetting_data();
    void forecastHorizonIsASetting();
    void runJsonReportsLossScaling();
    void textReportLabelsEmulatedFp16();
    void optimizerIsReportedAndRecorded();
    void precisionFlagChangesTheRun_data();
    void precisionFlagChangesTheRun();
    void executableRunsHeadless();
    void windowWithoutADisplaySaysSo();
    void benchOnlyOneModel();
    void fixMeetsTheChallengeInTheFile();
    void fixIsRefusedWhereItDoesNotApply_data();
    void fixIsRefusedWhereItDoesNotApply();
    void windowOptionsForAClassroom_data();
    void windowOptionsForAClassroom();
};

void TestCli::scenariosListsEveryId()
{
    const Output o = run({QStringLiteral("scenarios")});
    QCOMPARE(o.code, 0);
    for (const char *id : {"large-lr-ce", "large-lr-mse", "nan-input", "log-zero", "bn-constant", "sqrt-backward",
                           "exploding-deep", "safe-training", "fp16-overflow", "softmax-overflow", "zero-division",
                           "hidden-by-nan-to-num", "negative-variance", "zero-denominator"})
        QVERIFY2(o.out.contains(QLatin1String(id)), id);
}

void TestCli::runJsonReportsTheOrigin()
{
    const Output o = run({QStringLiteral("run"), QStringLiteral("--scenario"), QStringLiteral("large-lr-mse"),
                          QStringLiteral("--steps"), QStringLiteral("12"), QStringLiteral("--json")});
    QCOMPARE(o.code, 0);
    int steps = 0;
    QJsonObject summary, firstNonFinite, warning, updateWarning;
    for (const QJsonObject &j : o.objects) {
        if (j[QLatin1String("type")] == QLatin1String("event") &&
            j[QLatin1String("kind")] == QLatin1String("first-nonfinite"))
            firstNonFinite = j;
        if (j[QLatin1String("type")] == QLatin1String("event") &&
            j[QLatin1String("kind")] == QLatin1String("warning")) {
            const QString text = j[QLatin1String("text")].toString();
            if (text.contains(QLatin1String("fp32 overflow in about")) && warning.isEmpty())
                warning = j;
            if (text.contains(QLatin1String("times their size a step")) && updateWarning.isEmpty())
                updateWarning = j;
        }
        if (j[QLatin1String("type")] == QLatin1String("step")) {
            QCOMPARE(j[QLatin1String("step")].toInt(), steps);
            QVERIFY(j.contains(QLatin1String("loss")) && j.contains(QLatin1String("grad_norm")) &&
                    j.contains(QLatin1String("lr")) && j[QLatin1String("nonfinite_layers")].isArray());
            ++steps;
        }
        if (j[QLatin1String("type")] == QLatin1String("summary"))
            summary = j;
    }
    QCOMPARE(steps, 12);
    // Every event says its kind and, where it has one, its layer's path.
    QCOMPARE(firstNonFinite[QLatin1String("step")].toInt(), 8);
    QCOMPARE(firstNonFinite[QLatin1String("layer")].toString(), QStringLiteral("fc2"));
    QCOMPARE(o.objects.front()[QLatin1String("kind")].toString(), QStringLiteral("info"));
    // The overflow was forecast before it came, naming a layer.
    QVERIFY(warning[QLatin1String("step")].toInt() < 8);
    QVERIFY(!warning[QLatin1String("layer")].toString().isEmpty());
    // Before it, fc2's updates as large as its weights, three steps running (steps 2 to 4).
    QCOMPARE(updateWarning[QLatin1String("step")].toInt(), 4);
    QCOMPARE(updateWarning[QLatin1String("layer")].toString(), QStringLiteral("fc2"));
    QVERIFY(o.objects.front()[QLatin1String("layer")].isNull());
    QCOMPARE(summary[QLatin1String("source")].toString(), QStringLiteral("large-lr-mse"));
    QCOMPARE(summary[QLatin1String("steps_run")].toInt(), 12);
    QCOMPARE(summary[QLatin1String("first_nonfinite_step")].toInt(), 8);
    const QJsonObject origin = summary[QLatin1String("origin")].toObject();
    QCOMPARE(origin[QLatin1String("phase")].toString(), QStringLiteral("forward"));
    QCOMPARE(origin[QLatin1String("layer")].toString(), QStringLiteral("fc2"));
    QCOMPARE(origin[QLatin1String("op")].toString(), QStringLiteral("aten::addmm"));
    QCOMPARE(origin[QLatin1String("produced")].toBool(), true);
    QVERIFY(summary[QLatin1String("steps_per_second")].toDouble() > 0);
}

// Headless, a pause on a non-finite step stops the run with the update not applied: the step's one
// JSON line says skipped, and the summary counts exactly that step.
// large-lr-mse's warnings: fc2's updates (step 4), fc1's (step 6), fc2's output "in about 6 steps"
// and the loss "in about 2 steps" (step 7). A shorter horizon keeps only the nearer forecasts.
void TestCli::forecastHorizonIsASetting_data()
{
    QTest::addColumn<QString>("horizon");
    QTest::addColumn<QStringList>("warned");
    QTest::addRow("default 50") << QString() << QStringList{"4 fc2", "6 fc1", "7 fc2", "7 "};
    QTest::addRow("2 steps") << "2" << QStringList{"4 fc2", "6 fc1", "7 "};
    QTest::addRow("off") << "off" << QStringList{};
}

void TestCli::forecastHorizonIsASetting()
{
    QFETCH(QString, horizon);
    QFETCH(QStringList, warned);
    QStringList args{QStringLiteral("run"),     QStringLiteral("--scenario"), QStringLiteral("large-lr-mse"),
                     QStringLiteral("--steps"), QStringLiteral("12"),         QStringLiteral("--json")};
    if (!horizon.isEmpty())
        args << QStringLiteral("--forecast-horizon") << horizon;
    const Output o = run(args);
    QCOMPARE(o.code, 0);
    QStringList got;
    for (const QJsonObject &j : o.objects)
        if (j[QLatin1String("kind")] == QLatin1String("warning"))
            got << QString::number(j[QLatin1String("step")].toInt()) + " " + j[QLatin1String("layer")].toString();
    QCOMPARE(got, warned);
}

void TestCli::pausedStepIsReportedSkippedOnce()
{
    const Output o = run({QStringLiteral("run"), QStringLiteral("--scenario"), QStringLiteral("nan-input"),
                          QStringLiteral("--steps"), QStringLiteral("20"), QStringLiteral("--pause-on-nonfinite"),
                          QStringLiteral("--json")});
    QCOMPARE(o.code, 0);
    QJsonObject summary;
    QList<QJsonObject> steps;
    for (const QJsonObject &j : o.objects) {
        if (j[QLatin1String("type")] == QLatin1String("step"))
            steps << j;
        if (j[QLatin1String("type")] == QLatin1String("summary"))
            summary = j;
    }
    const int first = summary[QLatin1String("first_nonfinite_step")].toInt(-1);
    QVERIFY(first >= 0);
    QCOMPARE(steps.size(), first + 1);  // one line a step, the paused one last
    for (const QJsonObject &s : steps)
        QCOMPARE(s[QLatin1String("skipped")].toBool(), s[QLatin1String("step")].toInt() == first);
    QCOMPARE(summary[QLatin1String("steps_run")].toInt(), first + 1);
    QCOMPARE(summary[QLatin1String("skipped_steps")].toInt(), 1);
    QCOMPARE(summary[QLatin1String("final_state_finite")].toBool(), true);
}

void TestCli::nonFiniteNumbersAreStrings()
{
    const Output o = run({QStringLiteral("run"), QStringLiteral("--scenario"), QStringLiteral("log-zero"),
                          QStringLiteral("--steps"), QStringLiteral("2"), QStringLiteral("--json")});
    QCOMPARE(o.code, 0);
    QJsonObject first;
    for (const QJsonObject &j : o.objects)
        if (first.isEmpty() && j[QLatin1String("type")] == QLatin1String("step"))
            first = j;
    QVERIFY(first[QLatin1String("loss")].isString());
    QVERIFY(QStringList({QStringLiteral("NaN"), QStringLiteral("Infinity")})
                .contains(first[QLatin1String("loss")].toString()));
}

void TestCli::runJsonReportsLossScaling()
{
    const Output o = run({QStringLiteral("run"), QStringLiteral("--scenario"), QStringLiteral("fp16-overflow"),
                          QStringLiteral("--steps"), QStringLiteral("20"), QStringLiteral("--json")});
    QCOMPARE(o.code, 0);
    QList<QJsonObject> steps;
    QJsonObject summary;
    for (const QJsonObject &j : o.objects) {
        if (j[QLatin1String("type")] == QLatin1String("step"))
            steps.push_back(j);
        if (j[QLatin1String("type")] == QLatin1String("summary"))
            summary = j;
    }
    QCOMPARE(steps.size(), 20);
    // 18 skips from 65536 down to 0.25, then updates applied.
    for (int k = 0; k < 20; ++k) {
        const QJsonObject &s = steps[k];
        QCOMPARE(s[QLatin1String("loss_scale")].toDouble(), std::ldexp(1.0, 16 - std::min(k, 18)));
        QCOMPARE(s[QLatin1String("skipped")].toBool(), k < 18);
        QCOMPARE(s[QLatin1String("overflow_layers")].toArray().contains(QStringLiteral("head")), k < 18);
        QVERIFY(s[QLatin1String("fp16_headroom")].toObject()[QLatin1String("value")].toDouble() > 0);
    }
    QCOMPARE(summary[QLatin1String("skipped_steps")].toInt(), 18);
    QCOMPARE(summary[QLatin1String("scaler_skipped_steps")].toInt(), 18);
    QCOMPARE(summary[QLatin1String("final_loss_scale")].toDouble(), 0.25);
    QCOMPARE(summary[QLatin1String("precision")].toString(), QStringLiteral("fp16 (emulated on CPU)"));
    // Those overflows are the scaler at work: no first non-finite step in 20 steps.
    QVERIFY(summary[QLatin1String("first_nonfinite_step")].isNull());
    QVERIFY(summary[QLatin1String("origin")].isNull());
}

void TestCli::textReportLabelsEmulatedFp16()
{
    const Output o = run({QStringLiteral("run"), QStringLiteral("--scenario"), QStringLiteral("fp16-overflow"),
                          QStringLiteral("--steps"), QStringLiteral("2")});
    QCOMPARE(o.code, 0);
    QVERIFY2(o.out.contains(QLatin1String("seed 1, device cpu, fp16 (emulated on CPU)")), qPrintable(o.out));
    QVERIFY(o.out.contains(QLatin1String("steps run: 2, precision fp16 (emulated on CPU)")));
    QVERIFY(o.out.contains(QLatin1String("scale 65536")));
    QVERIFY(o.out.contains(QLatin1String(
        "fp16 (emulated on CPU) gradients overflowed at loss scale 32768: update skipped, scale now 16384")));
    QVERIFY(
        o.out.contains(QLatin1String("loss scaling: 2 steps skipped for overflowing gradients, final scale 16384")));
}

void TestCli::optimizerIsReportedAndRecorded()
{
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("sgd.nsrun"));
    const Output o =
        run({QStringLiteral("run"), QStringLiteral("--scenario"), QStringLiteral("large-lr-mse"),
             QStringLiteral("--steps"), QStringLiteral("10"), QStringLiteral("--optimizer"), QStringLiteral("sgd"),
             QStringLiteral("--momentum"), QStringLiteral("0.9"), QStringLiteral("--record"), file});
    QCOMPARE(o.code, 0);
    QVERIFY2(o.out.contains(QLatin1String("steps run: 10, precision fp32, optimizer sgd, momentum 0.9")),
             qPrintable(o.out));
    QVERIFY(o.out.contains(QLatin1String("first non-finite step: 6")));  // plain SGD: step 8
    const Output r = run({QStringLiteral("report"), file, QStringLiteral("--json")});
    QCOMPARE(r.code, 0);
    const QJsonObject summary = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(summary.value(QLatin1String("optimizer")).toString(), QStringLiteral("sgd, momentum 0.9"));
    const RunConfig config = RunFile(file.toStdString()).info().config;
    QVERIFY(config.optimizer.kind == OptimizerKind::Sgd);
    QCOMPARE(config.optimizer.momentum.value_or(-1), 0.9);
    QVERIFY(!config.optimizer.weightDecay);
}

void TestCli::fixMeetsTheChallengeInTheFile()
{
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("fixed.nsrun"));
    const Output o = run({QStringLiteral("run"), QStringLiteral("--scenario"), QStringLiteral("sqrt-backward"),
                          QStringLiteral("--fix-value"), QStringLiteral("1e-6"), QStringLiteral("--record"), file});
    QCOMPARE(o.code, 0);
    QVERIFY2(o.out.contains(QLatin1String("no non-finite value in any step")), qPrintable(o.out));
    QVERIFY2(o.out.contains(QLatin1String("challenge: Train 30 steps without a non-finite gradient. MET")), qPrintable(o.out));
    QCOMPARE(RunFile(file.toStdString()).info().config.controls->fix.value_or(-1), 1e-6);

    // report reads the verdict the run wrote; `challenge` is null for a run without one
    const Output r = run({QStringLiteral("report"), file, QStringLiteral("--json")});
    QCOMPARE(r.code, 0);
    const QJsonObject challenge =
        QJsonDocument::fromJson(r.out.toUtf8()).object().value(QLatin1String("challenge")).toObject();
    QCOMPARE(challenge.value(QLatin1String("id")).toString(), QStringLiteral("sqrt-backward"));
    QCOMPARE(challenge.value(QLatin1String("met")).toBool(), true);

    const Output plain = run({QStringLiteral("run"), QStringLiteral("--scenario"), QStringLiteral("sqrt-backward"),
                              QStringLiteral("--json")});
    QCOMPARE(plain.objects.back().value(QLatin1String("challenge")).toObject().value(QLatin1String("met")).toBool(true),
             false);
}

void TestCli::fixIsRefusedWhereItDoesNotApply_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("no fix of its own") << QStringList{"--scenario", "large-lr-mse", "--fix"}
                                       << "scenario 'large-lr-mse' has no fix of its own";
    QTest::newRow("a switch") << QStringList{"--scenario", "exploding-deep", "--fix-value", "0.5"}
                              << "the He init of 'exploding-deep' is a switch without a value";
    QTest::newRow("not positive") << QStringList{"--scenario", "zero-division", "--fix-value", "0"}
                                  << "--fix-value must be positive";
}

void TestCli::fixIsRefusedWhereItDoesNotApply()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Output o = run(QStringList{QStringLiteral("run")} + args);
    QCOMPARE(o.code, 2);
    QVERIFY2(o.err.contains(message), qPrintable(o.err));
}

// The window's --fix and --dock, as screenshots and a teacher's scripts use them, its --keep and --map.
void TestCli::windowOptionsForAClassroom_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    QTest::newRow("fix and lesson") << QStringList{"--language", "zh_CN", "--scenario", "zero-division", "--fix",
                                                   "--dock", "lesson", "--steps", "3"}
                                    << 0 << QString();
    QTest::newRow("no fix of its own") << QStringList{"--scenario", "large-lr-mse", "--fix"} << 2
                                       << "nanscope: --fix: scenario 'large-lr-mse' has no fix of its own";
    QTest::newRow("unknown dock") << QStringList{"--dock", "nowhere"} << 2
                                  << "nanscope: --dock is origin, lesson, ranks or comparison, got 'nowhere'";
    QTest::newRow("a keep policy") << QStringList{"--keep", "all", "--steps", "3"} << 0 << QString();
    QTest::newRow("a bad keep policy") << QStringList{"--keep", "most"} << 2
                                       << "nanscope: --keep is all, auto or a size such as 2GiB or 500MiB, got 'most'";
    QTest::newRow("a map measure") << QStringList{"--map", "update-ratio", "--steps", "3"} << 0 << QString();
    QTest::newRow("an unknown map measure")
        << QStringList{"--map", "colour"} << 2
        << "nanscope: --map is nonfinite, magnitude, headroom, update-ratio, grad-norm or difference (difference "
           "with --compare), got 'colour'";
}

void TestCli::windowOptionsForAClassroom()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const QString shot = dir.filePath(QStringLiteral("window.png"));
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.path());  // no language saved by another test
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(NANSCOPE_EXE), args + QStringList{QStringLiteral("--screenshot"), shot});
    QVERIFY(p.waitForFinished(120000));
    QCOMPARE(p.exitCode(), code);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    if (code == 0)
        QVERIFY2(QFileInfo(shot).size() > 10000, qPrintable(err));
    else
        QVERIFY2(err.contains(message), qPrintable(err));
}

void TestCli::precisionFlagChangesTheRun_data()
{
    QTest::addColumn<QStringList>("flags");
    QTest::addColumn<QString>("precision");
    QTest::addColumn<double>("firstScale");
    QTest::addColumn<int>("skipped");
    QTest::addColumn<bool>("finalFinite");
    QTest::addRow("fp32") << QStringList{QStringLiteral("--precision"), QStringLiteral("fp32")} << "fp32" << 1.0 << 0
                          << true;
    QTest::addRow("bf16") << QStringList{QStringLiteral("--precision"), QStringLiteral("bf16")} << "bf16" << 1.0 << 0
                          << true;
    QTest::addRow("bf16, --flag=value") << QStringList{QStringLiteral("--precision=bf16")} << "bf16" << 1.0 << 0
                                        << true;
    QTest::addRow("low scale") << QStringList{QStringLiteral("--loss-scale"), QStringLiteral("0.25")}
                               << "fp16 (emulated on CPU)" << 0.25 << 1 << true;  // steps 0, 1 fit; 2 does not
    QTest::addRow("default scale") << QStringList{} << "fp16 (emulated on CPU)" << 65536.0 << 3 << true;
    // Without a scaler the overflowing gradients reach the weights: NaN parameters, nothing skipped.
    QTest::addRow("no scaling") << QStringList{QStringLiteral("--loss-scale"), QStringLiteral("off")}
                                << "fp16 (emulated on CPU)" << 1.0 << 0 << false;
}

void TestCli::precisionFlagChangesTheRun()
{
    QFETCH(QStringList, flags);
    QFETCH(QString, precision);
    QFETCH(double, firstScale);
    QFETCH(int, skipped);
    QFETCH(bool, finalFinite);
    const Output o =
        run(QStringList{QStringLiteral("run"), QStringLiteral("--scenario"), QStringLiteral("fp16-overflow"),
                        QStringLiteral("--steps"), QStringLiteral("3"), QStringLiteral("--json")} +
            flags);
    QCOMPARE(o.code, 0);
    QJsonObject first, summary;
    for (const QJsonObject &j : o.objects) {
        if (first.isEmpty() && j[QLatin1String("type")] == QLatin1String("step"))
            first = j;
        if (j[QLatin1String("type")] == QLatin1String("summary"))
            summary = j;
    }
    QCOMPARE(summary[QLatin1String("precision")].toString(), precision);
    QCOMPARE(first[QLatin1String("loss_scale")].toDouble(), firstScale);
    QCOMPARE(summary[QLatin1String("skipped_steps")].toInt(), skipped);
    QCOMPARE(summary[QLatin1String("final_state_finite")].toBool(), finalFinite);
}

void TestCli::executableRunsHeadless()
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(NANSCOPE_EXE),
            {QStringLiteral("run"), QStringLiteral("--scenario"), QStringLiteral("sqrt-backward"),
             QStringLiteral("--steps"), QStringLiteral("3")});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    QVERIFY2(out.contains(QLatin1String("first non-finite step: 0")), qPrintable(out));
    QVERIFY(out.contains(QLatin1String("SqrtBackward0")));
    p.start(QStringLiteral(NANSCOPE_EXE), {QStringLiteral("run"), QStringLiteral("--steps"), QStringLiteral("3")});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
}

void TestCli::windowWithoutADisplaySaysSo()
{
    // Without a display Qt aborts with a page about platform plugins; NaNScope answers --help
    // anyway, and otherwise says in one line what to do.
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char *name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
        env.remove(QString::fromLatin1(name));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(NANSCOPE_EXE), {QStringLiteral("--help")});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    const QString help = QString::fromUtf8(p.readAllStandardOutput());
    QVERIFY2(help.contains(QLatin1String("--scenario <ID>")), qPrintable(help));
    p.start(QStringLiteral(NANSCOPE_EXE), {QStringLiteral("--scenario"), QStringLiteral("log-zero")});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 2);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(err.startsWith(QLatin1String("nanscope: no display")), qPrintable(err));
    QCOMPARE(err.count(QLatin1Char('\n')), 1);
}

void TestCli::benchOnlyOneModel()
{
    const Output o = run({QStringLiteral("bench"), QStringLiteral("--only"), QStringLiteral("cnn"),
                          QStringLiteral("--rounds"), QStringLiteral("2"), QStringLiteral("--json")});
    QCOMPARE(o.code, 0);
    QCOMPARE(int(o.objects.size()), 1);
    const QJsonObject b = o.objects.front();
    QCOMPARE(b[QLatin1String("model")].toString(), QStringLiteral("cnn"));
    QCOMPARE(b[QLatin1String("rounds")].toInt(), 2);
    QVERIFY(b[QLatin1String("probe_off_ms")].toDouble() > 0);
    const double ratio = b[QLatin1String("full_map_ms")].toDouble() / b[QLatin1String("probe_off_ms")].toDouble();
    QVERIFY(std::abs(b[QLatin1String("full_map_ratio")].toDouble() - ratio) < 1e-6 * ratio);  // JSON keeps 10 digits
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
