// The requests a window or `nanscope steer` sends a Python loop (steer_request.h): who may be
// steered, the policy the window's controls ask for, the line appended for the loop to read, and
// `steer` refusing where no loop reads (python/tests/test_steer.py runs the loop's end).
#include "cli_runner.h"

#include "nanscope/run_file.h"
#include "nanscope/steer_request.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace nanscope;
using testing::Output;
using testing::run;

class TestSteerRequest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void onlyASteerableLoopHasARunId_data();
    void onlyASteerableLoopHasARunId();
    void theControlsAskForAPolicy_data();
    void theControlsAskForAPolicy();
    void aRequestIsOneLineAppended();
    void aRequestNeedsTheLoopsFile();
    void answersNameTheirRequest();
    void steerRefusesWhatNoLoopReads_data();
    void steerRefusesWhatNoLoopReads();
};

void TestSteerRequest::onlyASteerableLoopHasARunId_data()
{
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("runId");  // empty: refused, `error` in the message
    QTest::addColumn<QString>("error");
    QTest::newRow("a loop that reads requests")
        << R"({"recorder": {"kind": "python", "run_id": "e9c9", "steerable": true}})" << "e9c9" << "";
    QTest::newRow("steer=False") << R"({"recorder": {"kind": "python", "run_id": "e9c9", "steerable": false}})" << ""
                                 << "does not read requests";
    QTest::newRow("an older recorder") << R"({"recorder": {"kind": "python"}})" << "" << "does not read requests";
    QTest::newRow("a run NaNScope trained") << R"({"scenario": "nan-input"})" << ""
                                            << "was not written by a Python loop";
    QTest::newRow("not JSON") << "{" << "" << "was not written by a Python loop";
}

void TestSteerRequest::onlyASteerableLoopHasARunId()
{
    QFETCH(QString, config);
    QFETCH(QString, runId);
    QFETCH(QString, error);
    RunFileInfo info;
    info.configText = config.toStdString();
    try {
        QCOMPARE(QString::fromStdString(steerableRunId(info, "run.nsrun")), runId);
        QVERIFY(error.isEmpty());
    } catch (const RunFileError &e) {
        QVERIFY2(runId.isEmpty() && QString::fromUtf8(e.what()).startsWith(QStringLiteral("run.nsrun")) &&
                     QString::fromUtf8(e.what()).contains(error),
                 e.what());
    }
}

void TestSteerRequest::theControlsAskForAPolicy_data()
{
    QTest::addColumn<bool>("quarantine");
    QTest::addColumn<bool>("zeroGrads");
    QTest::addColumn<bool>("rollback");
    QTest::addColumn<bool>("pause");
    QTest::addColumn<QString>("policy");
    QTest::newRow("nothing") << false << false << false << false << "record";
    QTest::newRow("quarantine") << true << false << false << false << "skip";
    QTest::newRow("zero gradients") << false << true << false << false << "skip";
    QTest::newRow("roll back") << true << true << true << false << "rollback";
    QTest::newRow("pause wins") << false << false << true << true << "pause";
}

void TestSteerRequest::theControlsAskForAPolicy()
{
    QFETCH(bool, quarantine);
    QFETCH(bool, zeroGrads);
    QFETCH(bool, rollback);
    QFETCH(bool, pause);
    QFETCH(QString, policy);
    Controls c;
    c.recovery.quarantineSamples = quarantine;
    c.recovery.zeroNonFiniteGrads = zeroGrads;
    c.recovery.rollbackOnNonFiniteLoss = rollback;
    c.pauseOnNonFinite = pause;
    QCOMPARE(QString::fromStdString(nonFinitePolicyFor(c)), policy);
}

void TestSteerRequest::aRequestIsOneLineAppended()
{
    QTemporaryDir dir;
    const QString run = dir.filePath(QStringLiteral("run.nsrun"));
    QFile requests(run + QStringLiteral(".steer"));
    QVERIFY(requests.open(QIODevice::WriteOnly));  // as the loop makes it
    requests.close();
    SteerRequest first;
    first.learningRate = 0.01;
    first.setClip = true;  // off
    SteerRequest second;
    second.decide = "rollback";
    second.policy = "pause";
    const std::string a = sendSteerRequest(run.toStdString(), "e9c9", first);
    const std::string b = sendSteerRequest(run.toStdString(), "e9c9", second);
    QVERIFY(a != b);
    QVERIFY(requests.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = requests.readAll().split('\n');
    QCOMPARE(lines.size(), 3);  // two lines, each ended
    QVERIFY(lines[2].isEmpty());
    const QJsonObject one = QJsonDocument::fromJson(lines[0]).object();
    const auto key = [](const char *k) { return QString::fromLatin1(k); };
    QCOMPARE(one, (QJsonObject{{key("format"), 1},
                               {key("run"), key("e9c9")},
                               {key("id"), QString::fromStdString(a)},
                               {key("lr"), 0.01},
                               {key("clip"), key("off")}}));
    const QJsonObject two = QJsonDocument::fromJson(lines[1]).object();
    QCOMPARE(two, (QJsonObject{{key("format"), 1},
                               {key("run"), key("e9c9")},
                               {key("id"), QString::fromStdString(b)},
                               {key("policy"), key("pause")},
                               {key("decide"), key("rollback")}}));
}

void TestSteerRequest::aRequestNeedsTheLoopsFile()
{
    QTemporaryDir dir;
    const QString run = dir.filePath(QStringLiteral("run.nsrun"));
    SteerRequest r;
    r.learningRate = 0.5;
    QVERIFY_THROWS_EXCEPTION(RunFileError, sendSteerRequest(run.toStdString(), "e9c9", r));
    QVERIFY(!QFile::exists(run + QStringLiteral(".steer")));  // never made here: the loop makes it
}

void TestSteerRequest::answersNameTheirRequest()
{
    const auto event = [](const char *id, std::vector<std::string> args) {
        Event e(EventKind::Warning, 3, -1, EventMessage{id, std::move(args)});
        return e;
    };
    QCOMPARE(steerAnswer(event("steer-applied", {"lr 0.01", "ab12"}), "ab12"), SteerAnswer::Applied);
    QCOMPARE(steerAnswer(event("pause-decided", {"skip", "0.4", "ab12"}), "ab12"), SteerAnswer::Decided);
    QCOMPARE(steerAnswer(event("steer-refused", {"not paused", "ab12"}), "ab12"), SteerAnswer::Refused);
    QCOMPARE(steerAnswer(event("steer-applied", {"lr 0.01", "cd34"}), "ab12"), SteerAnswer::None);
    QCOMPARE(steerAnswer(event("batch-skipped", {}), "ab12"), SteerAnswer::None);
}

// `steer` talks to a Python loop (python/tests/test_steer.py drives one); without one it refuses
// at once, with a line that says why.
void TestSteerRequest::steerRefusesWhatNoLoopReads_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    QTest::newRow("a run NaNScope trained") << QStringList{"--lr", "0.1"} << 1
                                            << "was not written by a Python loop (nanscope.record)";
    QTest::newRow("nothing asked") << QStringList{} << 2 << "nothing to ask: give --lr, --clip, --policy or --decide";
    QTest::newRow("a rate below 0") << QStringList{"--lr", "-1"} << 2 << "--lr must be above 0, got '-1'";
    QTest::newRow("an unknown policy") << QStringList{"--policy", "ignore"} << 2
                                       << "--policy is record|skip|rollback|raise|pause, got 'ignore'";
    QTest::newRow("an unknown decision") << QStringList{"--decide", "later"} << 2
                                         << "--decide is continue|skip|rollback|stop, got 'later'";
}

void TestSteerRequest::steerRefusesWhatNoLoopReads()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("run.nsrun"));
    QCOMPARE(run({QStringLiteral("run"), QStringLiteral("--scenario"), QStringLiteral("large-lr-mse"),
                  QStringLiteral("--steps"), QStringLiteral("2"), QStringLiteral("--record"), file})
                 .code,
             0);
    const Output o = run(QStringList{QStringLiteral("steer"), file} + args);
    QCOMPARE(o.code, code);
    QVERIFY2(o.err.contains(message), qPrintable(o.err));
    QVERIFY(!QFile::exists(file + QStringLiteral(".steer")));  // steer never makes the request file
}

QTEST_GUILESS_MAIN(TestSteerRequest)
#include "tst_steer_request.moc"
