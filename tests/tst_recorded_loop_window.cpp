// A loop the Python recorder trained and recorded (tests/python_event_run.py, run with Debian's
// python3-torch; its run's config holds a "recorder" object, no scenario and no model): the window
// opens it, its control panel names the loop instead of a demo, Start with it selected is refused
// with why, and its events read in Chinese, and in English as the recorder wrote them.
#include "live_session.h"
#include "models/event_log_model.h"
#include "widgets/control_panel.h"
#include "widgets/language.h"
#include "widgets/lesson_pane.h"
#include "widgets/learning_rate_edit.h"
#include "widgets/origin_panel.h"
#include "widgets/plot_panel.h"
#include "window/main_window.h"

#include "nanscope/run_file.h"

#include "python_with_torch.h"
#include "window_runs.h"

#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QPushButton>
#include <QLabel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>

using namespace nanscope;
using nanscope::testing::runToEnd;

class TestRecordedLoopWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void theLoopIsNamedAndNotTrainedAgain();
    void pythonRunEventsReadInChinese();
    void lessonDescribesTheLoop();
    void aRunThatNeverFinishedSaysSo();
    void theWindowSteersARunningLoop();
    void aJobsRankIsWatchedNotSteered();
    void aFollowedLoopThatIsKilledEndsUnfinished();
    void aPausedLoopTakesTheWindowsDecision_data();
    void aPausedLoopTakesTheWindowsDecision();
    void cleanup() { setLanguage(QStringLiteral("en"), false); }

private:
    QTemporaryDir dir_;
    QString runPath_;  // written by the Python recorder itself (tests/python_event_run.py)
    QString python_;   // the interpreter with torch that wrote it
};

void TestRecordedLoopWindow::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QString tried;
    const QString python = python_ = testing::pythonWithTorch(&tried);
    if (python.isEmpty() && NANSCOPE_PYTHON_TORCH_OPTIONAL)
        QSKIP(qPrintable(QStringLiteral("no python3 with torch (tried %1)").arg(tried)));
    QVERIFY2(!python.isEmpty(), qPrintable(QStringLiteral("no python3 with torch (tried %1); install python3-torch")
                                               .arg(tried)));
    runPath_ = dir_.filePath(QStringLiteral("events.nsrun"));
    QProcess recorder;
    recorder.setProcessChannelMode(QProcess::MergedChannels);
    recorder.start(python, {QStringLiteral(NANSCOPE_PYTHON_EVENT_RUN), runPath_});
    QVERIFY(recorder.waitForFinished(120000));
    QVERIFY2(recorder.exitCode() == 0, recorder.readAll().constData());
}

void TestRecordedLoopWindow::theLoopIsNamedAndNotTrainedAgain()
{
    const std::string path = runPath_.toStdString();
    QVERIFY(RunFile(path).info().config.isRecordedLoop());

    MainWindow w(newLiveSession);
    w.selectScenario(QStringLiteral("nan-input"));  // whatever was picked before must not show
    QVERIFY(runToEnd(w, [&] { w.openRun(QString::fromStdString(path)); }));
    auto *picker = w.controlPanel()->findChild<QComboBox *>();
    QVERIFY(picker);
    QCOMPARE(picker->currentText(), QStringLiteral("Recorded loop: events.py"));
    QCOMPARE(w.controlPanel()->runName(), QStringLiteral("events"));
    QCOMPARE(w.controlPanel()->scenario(), QString());
    const RunConfig again = w.controlPanel()->runConfig();
    QVERIFY(again.isRecordedLoop());
    const std::string why = invalidRunConfigReason(again);
    QVERIFY2(why.find("cannot train it again") != std::string::npos, why.c_str());
}

// The English each event was recorded with, in order.
static QStringList recordedTexts(const QString &path)
{
    QStringList out;
    sqlite3 *db = nullptr;
    if (sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt *s = nullptr;
        sqlite3_prepare_v2(db, "SELECT text FROM events ORDER BY id", -1, &s, nullptr);
        while (s && sqlite3_step(s) == SQLITE_ROW)
            out << QString::fromUtf8(reinterpret_cast<const char *>(sqlite3_column_text(s, 0)));
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
    return out;
}

// The event log's sentences, as the window shows them, in order.
static QStringList shownEvents(const MainWindow &w)
{
    QStringList out;
    for (int row = 0; row < w.eventModel()->rowCount(); ++row)
        out << w.eventModel()->index(row, EventLogModel::MessageColumn).data().toString();
    return out;
}

void TestRecordedLoopWindow::pythonRunEventsReadInChinese()
{
    const QString path = runPath_;
    QVERIFY(setLanguage(QStringLiteral("zh_CN"), false));
    MainWindow w(newLiveSession);
    QVERIFY(runToEnd(w, [&] { w.openRun(path); }));
    const QStringList chinese = shownEvents(w);
    QVERIFY2(chinese.size() >= 6, qPrintable(chinese.join(QLatin1Char('\n'))));
    QVERIFY2(chinese[0].startsWith(QStringLiteral("正在记录 events.py：cpu 上的 Python 训练循环，torch ")),
             qPrintable(chinese[0]));
    QVERIFY2(chinese[1].startsWith(QStringLiteral("未测量：1：TorchScript 模块不接受 Python 钩子")), qPrintable(chinese[1]));
    QCOMPARE(chinese[2], QStringLiteral("本步没有调用 optimizer.step()"));
    QVERIFY2(chinese.filter(QStringLiteral("2 的输出每步增长 x")).size() == 1, qPrintable(chinese.join(QLatin1Char('\n'))));
    QVERIFY2(chinese.filter(QStringLiteral("损失每步增长 x")).size() == 1, qPrintable(chinese.join(QLatin1Char('\n'))));

    // In English the window composes each message into the very sentence Python wrote: one wording.
    w.findChild<QAction *>(QStringLiteral("language_en"))->trigger();
    QCoreApplication::processEvents();
    const QStringList english = shownEvents(w);
    QCOMPARE(english, recordedTexts(path));
    QVERIFY(english != chinese);
}

// A loop has no lesson: the panel says what was recorded, from the file alone.
void TestRecordedLoopWindow::lessonDescribesTheLoop()
{
    MainWindow w(newLiveSession);
    QVERIFY(runToEnd(w, [&] { w.openRun(runPath_); }));
    const QString page = w.lessonPane()->toPlainText();
    // nn.Sequential(Linear(4, 16), scripted ReLU, Linear(16, 1)): 4*16+16 + 16+1 parameters, 4 modules.
    for (const QString &expected :
         {QStringLiteral("A recorded Python loop"), QStringLiteral("python_event_run.py"),
          QStringLiteral("Model: Sequential, 97 parameters (float32), 4 modules"),
          QStringLiteral("Optimizer: SGD ("), QStringLiteral("lr 0.5"), QStringLiteral("A non-finite update: record"),
          QStringLiteral("nanscope steer events.nsrun"), QStringLiteral("Not measured: not measured: 1: a TorchScript")})
        QVERIFY2(page.contains(expected), qPrintable(expected + QStringLiteral(" not in:\n") + page));
    QCOMPARE(w.findChild<QLabel *>(QStringLiteral("runState"))->text(), QStringLiteral("finished"));
}

// A file whose writer never finished it (a killed loop) ends in the window as "stopped without
// finishing", not "finished".
void TestRecordedLoopWindow::aRunThatNeverFinishedSaysSo()
{
    const QString killed = dir_.filePath(QStringLiteral("killed.nsrun"));
    QVERIFY(QFile::copy(runPath_, killed));
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open(killed.toUtf8().constData(), &db), SQLITE_OK);
    QCOMPARE(sqlite3_exec(db, "UPDATE run SET finished = NULL, summary = NULL", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    MainWindow w(newLiveSession);
    QVERIFY(runToEnd(w, [&] { w.openRun(killed, false); }));
    QCOMPARE(w.findChild<QLabel *>(QStringLiteral("runState"))->text(), QStringLiteral("stopped without finishing"));
}

// A Python loop that records into `path` while the test runs, in a process of its own.
static std::unique_ptr<QProcess> startLoop(const QString &python, const QString &path, const QString &policy,
                                           int steps, const QString &nanAt, int rankOfTwo = -1)
{
    auto loop = std::make_unique<QProcess>();
    if (rankOfTwo >= 0) {  // the recorder reads a job's rank from torchrun's variables
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("RANK"), QString::number(rankOfTwo));
        env.insert(QStringLiteral("WORLD_SIZE"), QStringLiteral("2"));
        loop->setProcessEnvironment(env);
    }
    loop->start(python, {QStringLiteral(NANSCOPE_PYTHON_STEERED_LOOP), path, policy, QString::number(steps), nanAt});
    return loop;
}

// Its lines: the learning rate each step's update used, and a stop.
static QList<QJsonObject> loopLines(QProcess &loop)
{
    QList<QJsonObject> out;
    for (const QByteArray &line : loop.readAllStandardOutput().split('\n'))
        if (line.startsWith('{'))
            out << QJsonDocument::fromJson(line).object();
    return out;
}

static QList<QStringList> rowsOf(const QString &path, const char *sql)
{
    QList<QStringList> out;
    sqlite3 *db = nullptr;
    if (sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt *s = nullptr;
        sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
        while (s && sqlite3_step(s) == SQLITE_ROW) {
            QStringList row;
            for (int c = 0; c < sqlite3_column_count(s); ++c)
                row << QString::fromUtf8(reinterpret_cast<const char *>(sqlite3_column_text(s, c)));
            out << row;
        }
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
    return out;
}

// Opens in `w` the run a loop records into `path` once its first step is in the file, and waits
// until the window shows a step: the window follows the loop while it trains.
static bool followWhileRecorded(MainWindow &w, const QString &path)
{
    return QTest::qWaitFor([&] { return !rowsOf(path, "SELECT step FROM steps").isEmpty(); }, 60000) &&
           w.openRun(path) && QTest::qWaitFor([&] { return w.recordsShown() > 0; }, 20000);
}

// Following a loop that records, the window's learning rate reaches the loop's param groups at its
// next step and is recorded as a control change; the precision stays the loop's own.
void TestRecordedLoopWindow::theWindowSteersARunningLoop()
{
    const QString path = dir_.filePath(QStringLiteral("steered.nsrun"));
    auto loop = startLoop(python_, path, QStringLiteral("record"), 100, QStringLiteral("-"));
    MainWindow w(newLiveSession);
    QVERIFY(followWhileRecorded(w, path));
    QVERIFY(w.controlPanel()->isEnabled());
    QVERIFY(w.controlPanel()->learningRateEdit()->isEnabled());
    QVERIFY(!w.controlPanel()->precisionBox()->isEnabled());
    w.controlPanel()->learningRateEdit()->spinBox()->setValue(0.01);
    QTRY_COMPARE_WITH_TIMEOUT(rowsOf(path, "SELECT control, old, new FROM control_changes"),
                              (QList<QStringList>{{QStringLiteral("lr"), QStringLiteral("0.1"), QStringLiteral("0.01")}}), 20000);
    const int at = rowsOf(path, "SELECT step FROM control_changes").front().front().toInt();
    QTRY_VERIFY_WITH_TIMEOUT(w.plots()->controlMarkCount() == 1, 20000);  // the window shows the change
    QVERIFY(loop->waitForFinished(60000));
    const QList<QJsonObject> lines = loopLines(*loop);
    QCOMPARE(lines.size(), 100);
    for (const QJsonObject &line : lines)
        QCOMPARE(line.value(QLatin1String("lr")).toDouble(), line.value(QLatin1String("step")).toInt() < at ? 0.1 : 0.01);
    QTRY_VERIFY(!w.controlPanel()->isEnabled());  // the loop has ended: nothing reads requests
}

// A rank of a data-parallel job changes only with its ranks, at one step (`nanscope steer FOLDER`):
// alone, its parameters would part from the others'. The window watches it.
void TestRecordedLoopWindow::aJobsRankIsWatchedNotSteered()
{
    const QString path = dir_.filePath(QStringLiteral("rank-0.nsrun"));
    auto loop = startLoop(python_, path, QStringLiteral("record"), 40, QStringLiteral("-"), 0);
    MainWindow w(newLiveSession);
    QVERIFY(followWhileRecorded(w, path));
    QCOMPARE(rowsOf(path, "SELECT rank, world_size FROM run"),
             (QList<QStringList>{{QStringLiteral("0"), QStringLiteral("2")}}));
    QVERIFY(!w.controller().capabilities().controls);
    QVERIFY(!w.controlPanel()->isEnabled());
    QVERIFY(loop->waitForFinished(60000));
    QCOMPARE(loopLines(*loop).size(), 40);
}

// Following a loop while it records: new steps keep coming; once the loop is killed its writer's
// heartbeat stands still, and the window ends the run as unfinished, saying why.
void TestRecordedLoopWindow::aFollowedLoopThatIsKilledEndsUnfinished()
{
    const QString path = dir_.filePath(QStringLiteral("killed-live.nsrun"));
    auto loop = startLoop(python_, path, QStringLiteral("record"), 1000000, QStringLiteral("-"));
    MainWindow w(newLiveSession);
    QVERIFY(followWhileRecorded(w, path));
    const int shown = w.recordsShown();
    QTRY_VERIFY_WITH_TIMEOUT(w.recordsShown() > shown + 5, 20000);  // followed: the steps keep coming
    auto *state = w.findChild<QLabel *>(QStringLiteral("runState"));
    QCOMPARE(state->text(), QStringLiteral("following"));
    loop->kill();
    QVERIFY(loop->waitForFinished(10000));
    QTRY_COMPARE_WITH_TIMEOUT(state->text(), QStringLiteral("stopped without finishing"), 40000);
    const QStringList said = shownEvents(w);
    QVERIFY2(!said.filter(QStringLiteral("the writer of this run stopped without finishing it")).isEmpty(),
             qPrintable(said.join(QLatin1Char('\n'))));
}

// The origin panel's decisions on a loop paused before a non-finite update.
void TestRecordedLoopWindow::aPausedLoopTakesTheWindowsDecision_data()
{
    QTest::addColumn<QString>("button");
    QTest::addColumn<QString>("decided");
    QTest::addColumn<bool>("finiteAfter");
    QTest::newRow("skip") << QStringLiteral("S&kip batch") << QStringLiteral("skip") << true;
    QTest::newRow("continue") << QStringLiteral("&Continue") << QStringLiteral("continue") << false;
    QTest::newRow("stop") << QStringLiteral("S&top the loop") << QStringLiteral("stop") << true;
}

void TestRecordedLoopWindow::aPausedLoopTakesTheWindowsDecision()
{
    QFETCH(QString, button);
    QFETCH(QString, decided);
    QFETCH(bool, finiteAfter);
    const QString path = dir_.filePath(QStringLiteral("paused-%1.nsrun").arg(decided));
    auto loop = startLoop(python_, path, QStringLiteral("pause"), 2, QStringLiteral("1"));
    MainWindow w(newLiveSession);
    QVERIFY(followWhileRecorded(w, path));
    auto *origin = w.findChild<OriginPanel *>();
    QTRY_VERIFY_WITH_TIMEOUT(origin->awaitingDecision(), 30000);
    QPushButton *clicked = nullptr;
    for (QPushButton *b : origin->findChildren<QPushButton *>()) {
        if (b->text() == QStringLiteral("Re&try step"))
            QVERIFY(!b->isVisible());  // a loop cannot compute its step again
        if (b->text() == button)
            clicked = b;
    }
    QVERIFY(clicked && clicked->isEnabled());
    QVERIFY(origin->text().contains(QStringLiteral("Paused before the update of step 1")));
    clicked->click();
    QVERIFY(loop->waitForFinished(60000));
    const QList<QJsonObject> lines = loopLines(*loop);
    QCOMPARE(lines.back().value(QLatin1String("finite")).toBool(), finiteAfter);
    QCOMPARE(lines.back().contains(QLatin1String("stopped")), decided == QLatin1String("stop"));
    const auto said = rowsOf(path, "SELECT text FROM events WHERE message LIKE '%pause-decided%'");
    QCOMPARE(said.size(), 1);
    QVERIFY2(said.front().front().startsWith(QStringLiteral("decided: %1, after ").arg(decided)),
             qPrintable(said.front().front()));
}

QTEST_MAIN(TestRecordedLoopWindow)
#include "tst_recorded_loop_window.moc"
