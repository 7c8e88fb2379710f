// The command line's arguments: every bad one refused with a one-line message and the usage exit
// code, and --help printing the command's synopsis whatever stands next to it.
#include "cli_runner.h"

#include <QtTest>

using nanscope::testing::Output;
using nanscope::testing::run;

class TestCliArguments : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void badArguments_data();
    void badArguments();
    void helpPrintsTheSynopsis_data();
    void helpPrintsTheSynopsis();
};

void TestCliArguments::badArguments_data()
{
    // The README's exit codes: 2 for arguments refused before anything runs, 1 for a run that
    // started and then failed.
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::addColumn<int>("code");
    const auto logZero = [](std::initializer_list<const char *> more) {
        QStringList a{QStringLiteral("run"), QStringLiteral("--scenario"), QStringLiteral("log-zero")};
        for (const char *m : more)
            a << QString::fromLatin1(m);
        return a;
    };
    QTest::addRow("no scenario") << QStringList{QStringLiteral("run")} << QStringLiteral("needs --scenario") << 2;
    QTest::addRow("negative forecast horizon")
        << logZero({"--forecast-horizon", "-1"}) << QStringLiteral("--forecast-horizon") << 2;
    QTest::addRow("unknown scenario") << QStringList{QStringLiteral("run"), QStringLiteral("--scenario"),
                                                     QStringLiteral("nope")}
                                      << QStringLiteral("unknown scenario 'nope'") << 2;
    QTest::addRow("bad steps") << logZero({"--steps", "ten"}) << QStringLiteral("--steps expects an integer") << 2;
    QTest::addRow("bad lr") << logZero({"--lr", "nan"}) << QStringLiteral("--lr expects a finite number") << 2;
    QTest::addRow("bad recovery") << logZero({"--recovery", "some"})
                                  << QStringLiteral("--recovery is none, skip or full") << 2;
    QTest::addRow("missing value") << QStringList{QStringLiteral("run"), QStringLiteral("--scenario")}
                                   << QStringLiteral("--scenario needs a value") << 2;
    QTest::addRow("bad precision") << logZero({"--precision", "fp8"})
                                   << QStringLiteral("--precision is fp32, fp16 or bf16") << 2;
    QTest::addRow("bad loss scale") << logZero({"--loss-scale", "-4"})
                                    << QStringLiteral("--loss-scale must be positive or 'off'") << 2;
    QTest::addRow("bad device") << logZero({"--device", "tpu"}) << QStringLiteral("--device is cpu or cuda, got 'tpu'")
                                << 2;
    QTest::addRow("unknown flag") << logZero({"--fast"}) << QStringLiteral("run: unknown argument '--fast'") << 2;
    QTest::addRow("stray word") << logZero({"fast"}) << QStringLiteral("run: unknown argument 'fast'") << 2;
    QTest::addRow("flag with a value") << logZero({"--json=no"}) << QStringLiteral("--json takes no value") << 2;
    QTest::addRow("save without model") << logZero({"--save", "out.pt"})
                                        << QStringLiteral("--save writes a TorchScript model") << 2;
    QTest::addRow("scenarios takes no options") << QStringList{QStringLiteral("scenarios"), QStringLiteral("--all")}
                                                << QStringLiteral("scenarios: unknown argument '--all'") << 2;
    QTest::addRow("no sub-command") << QStringList{QStringLiteral("train")} << QStringLiteral("expected a sub-command")
                                    << 2;
    QTest::addRow("unknown bench model") << QStringList{QStringLiteral("bench"), QStringLiteral("--only"),
                                                        QStringLiteral("vgg")}
                                         << QStringLiteral("unknown benchmark model 'vgg'") << 2;
    QTest::addRow("bad bench rounds") << QStringList{QStringLiteral("bench"), QStringLiteral("--rounds"),
                                                     QStringLiteral("0")}
                                      << QStringLiteral("--rounds expects an integer >= 1, got '0'") << 2;
    // --only picks a built-in model: the --model form of bench has no such option.
    QTest::addRow("bench model with --only")
        << QStringList{QStringLiteral("bench"), QStringLiteral("--model"), QStringLiteral("m.pt"),
                       QStringLiteral("--only"), QStringLiteral("cnn")}
        << QStringLiteral("bench: unknown argument '--only'") << 2;
    // Arguments are refused before the file is opened, so no file is needed here.
    QTest::addRow("inspect bad seed") << QStringList{QStringLiteral("inspect"), QStringLiteral("m.pt"),
                                                     QStringLiteral("--seed"), QStringLiteral("x")}
                                      << QStringLiteral("--seed expects an integer >= 0, got 'x'") << 2;
    QTest::addRow("inspect two files") << QStringList{QStringLiteral("inspect"), QStringLiteral("a.pt"),
                                                      QStringLiteral("b.pt")}
                                       << QStringLiteral("inspect: unknown argument 'b.pt'") << 2;
    QTest::addRow("inspect bad shape") << QStringList{QStringLiteral("inspect"), QStringLiteral("m.pt"),
                                                      QStringLiteral("--input-shape"), QStringLiteral("8x0")}
                                       << QStringLiteral(
                                              "--input-shape expects positive sizes like 8x3x64x64, optionally "
                                              "with a dtype (8x32:int64, 8x32:bool), got '8x0'")
                                       << 2;
    QTest::addRow("inspect saves nothing") << QStringList{QStringLiteral("inspect"), QStringLiteral("m.pt"),
                                                          QStringLiteral("--save"), QStringLiteral("out.pt")}
                                           << QStringLiteral("inspect changes nothing, so it saves nothing") << 2;
    QTest::addRow("unknown optimizer") << logZero({"--optimizer", "rmsprop"})
                                       << QStringLiteral("--optimizer is sgd, adam or adamw, got 'rmsprop'") << 2;
    QTest::addRow("momentum of 1") << logZero({"--momentum", "1"})
                                   << QStringLiteral("--momentum must lie in [0, 1), got '1'") << 2;
    QTest::addRow("negative weight decay")
        << logZero({"--weight-decay", "-0.1"}) << QStringLiteral("--weight-decay must be >= 0, got '-0.1'") << 2;
    QTest::addRow("momentum for adam") << logZero({"--optimizer", "adam", "--momentum", "0.5"})
                                       << QStringLiteral("momentum is a setting of sgd; this run's optimizer is adam")
                                       << 1;
    // The run starts, then BatchNorm refuses a batch of one in training mode: a run error.
    QTest::addRow("batch of one") << QStringList{QStringLiteral("run"), QStringLiteral("--scenario"),
                                                 QStringLiteral("bn-constant"), QStringLiteral("--batch"),
                                                 QStringLiteral("1")}
                                  << QStringLiteral("more than 1 value per channel") << 1;
}

void TestCliArguments::badArguments()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    QFETCH(int, code);
    const Output o = run(args);
    QCOMPARE(o.code, code);
    QVERIFY2(o.err.contains(message), qPrintable(o.err));
    QCOMPARE(o.err.count(QLatin1Char('\n')), 1);  // one line, no LibTorch stack
}

void TestCliArguments::helpPrintsTheSynopsis_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("synopsis");
    QTest::addRow("scenarios") << QStringList{QStringLiteral("scenarios"), QStringLiteral("--help")}
                               << QStringLiteral("usage: nanscope scenarios");
    // --help wins over anything wrong next to it: the user is asking how to write it.
    QTest::addRow("run") << QStringList{QStringLiteral("run"), QStringLiteral("--steps"), QStringLiteral("ten"),
                                        QStringLiteral("-h")}
                         << QStringLiteral("usage: nanscope run --scenario ID");
    QTest::addRow("inspect") << QStringList{QStringLiteral("inspect"), QStringLiteral("--help")}
                             << QStringLiteral("usage: nanscope inspect FILE.pt");
    QTest::addRow("bench") << QStringList{QStringLiteral("bench"), QStringLiteral("--help")}
                           << QStringLiteral("usage: nanscope bench [--rounds N]");
    QTest::addRow("bench --model") << QStringList{QStringLiteral("bench"), QStringLiteral("--model"),
                                                  QStringLiteral("m.pt"),  QStringLiteral("--only"),
                                                  QStringLiteral("vgg"),   QStringLiteral("--help")}
                                   << QStringLiteral("usage: nanscope bench [--rounds N]");
    QTest::addRow("missing value") << QStringList{QStringLiteral("inspect"), QStringLiteral("--help"),
                                                  QStringLiteral("--seed")}
                                   << QStringLiteral("usage: nanscope inspect FILE.pt");
}

void TestCliArguments::helpPrintsTheSynopsis()
{
    QFETCH(QStringList, args);
    QFETCH(QString, synopsis);
    const Output o = run(args);
    QCOMPARE(o.code, 0);
    QVERIFY2(o.out.startsWith(synopsis), qPrintable(o.out));
    QVERIFY(o.err.isEmpty());
}

QTEST_GUILESS_MAIN(TestCliArguments)
#include "tst_cli_arguments.moc"
