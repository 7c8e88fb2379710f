// A loop the Python recorder trained and recorded (tests/python_event_run.py, run with Debian's
// python3-torch; its run's config holds a "recorder" object, no scenario and no model): the window
// opens it, its control panel names the loop instead of a demo, Start with it selected is refused
// with why, and its events read in Chinese, and in English as the recorder wrote them.
#include "models/event_log_model.h"
#include "widgets/control_panel.h"
#include "widgets/language.h"
#include "widgets/lesson_pane.h"
#include "window/main_window.h"

#include "nanscope/run_file.h"

#include "python_with_torch.h"
#include "window_runs.h"

#include <QAction>
#include <QComboBox>
#include <QFile>
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
    void cleanup() { setLanguage(QStringLiteral("en"), false); }

private:
    QTemporaryDir dir_;
    QString runPath_;  // written by the Python recorder itself (tests/python_event_run.py)
};

void TestRecordedLoopWindow::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QString tried;
    const QString python = testing::pythonWithTorch(&tried);
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

    MainWindow w;
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

void TestRecordedLoopWindow::pythonRunEventsReadInChinese()
{
    const QString path = runPath_;
    QVERIFY(setLanguage(QStringLiteral("zh_CN"), false));
    MainWindow w;
    QVERIFY(runToEnd(w, [&] { w.openRun(path); }));
    const auto shown = [&w] {
        QStringList out;
        for (int row = 0; row < w.eventModel()->rowCount(); ++row)
            out << w.eventModel()->index(row, EventLogModel::MessageColumn).data().toString();
        return out;
    };
    const QStringList chinese = shown();
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
    const QStringList english = shown();
    QCOMPARE(english, recordedTexts(path));
    QVERIFY(english != chinese);
}

// A loop has no lesson: the panel says what was recorded, from the file alone.
void TestRecordedLoopWindow::lessonDescribesTheLoop()
{
    MainWindow w;
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
    MainWindow w;
    QVERIFY(runToEnd(w, [&] { w.openRun(killed, false); }));
    QCOMPARE(w.findChild<QLabel *>(QStringLiteral("runState"))->text(), QStringLiteral("stopped without finishing"));
}

QTEST_MAIN(TestRecordedLoopWindow)
#include "tst_recorded_loop_window.moc"
