// Replays and capsules from the window: an opened run's step replays on a worker and shows its
// verdict and what-ifs; a replay of a run closed meanwhile is dropped; "Save this step" keeps a
// capsule of the next step computed; a Python run shows the replay nanscope.replay stored in it.
#include "live_session.h"
#include "widgets/origin_panel.h"
#include "widgets/replay_view.h"
#include "widgets/language.h"
#include "window/main_window.h"
#include "window/replay_runner.h"

#include "nanscope/capsule_file.h"
#include "nanscope/run_file.h"

#include "python_with_torch.h"
#include "window_runs.h"

#include <QAction>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest>

#include <algorithm>
#include <functional>

using namespace nanscope;
using nanscope::testing::runToEnd;

namespace {

// large-lr-mse's 12 steps trained in `live` (non-finite from step 8), its run file opened in `opened`.
bool openedLargeLrMse(MainWindow &live, MainWindow &opened)
{
    live.selectScenario(QStringLiteral("large-lr-mse"));
    live.setSteps(12);
    return runToEnd(live, [&] { live.startRun(); }) && runToEnd(opened, [&] { opened.openRun(live.runFile()); });
}

// `python` running `arguments` with python/ and python/tests importable; its output when it fails.
QString runPython(const QString &python, const QStringList &arguments)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(NANSCOPE_PYTHON_DIR ":" NANSCOPE_PYTHON_DIR "/tests"));
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(python, arguments);
    if (!p.waitForFinished(300000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return QStringLiteral("failed: ") + QString::fromUtf8(p.readAll());
    return {};
}

}  // namespace

class TestReplayWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }  // the runs folder and settings of a test
    void replayThisStepShowsTheVerdict();
    void aReplayOfARunClosedIsDropped();
    void saveThisStepKeepsACapsule();
    void theReplaySpeaksChinese();
    void aPythonRunShowsTheReplayStoredInIt();
    void cleanup() { setLanguage(QStringLiteral("en"), false); }
};

void TestReplayWindow::replayThisStepShowsTheVerdict()
{
    // An opened run file replays on a worker: the window answers while it does.
    MainWindow live(newLiveSession), opened(newLiveSession);
    QVERIFY(openedLargeLrMse(live, opened));
    ReplayView *view = opened.originPanel()->replay();
    auto *button = view->findChild<QPushButton *>(QStringLiteral("replayStep"));
    QVERIFY(button && button->isEnabled());
    button->click();
    QTRY_VERIFY_WITH_TIMEOUT(view->verdictText().startsWith(QStringLiteral("Step 8 ")), 60000);
    QVERIFY2(view->verdictText().contains(QStringLiteral("Reproduced bit for bit")), qPrintable(view->verdictText()));
    QVERIFY(view->verdictText().contains(QStringLiteral("aten::addmm")));
    const QStringList rows = view->whatIfRows();
    QVERIFY2(rows.contains(QStringLiteral("lr=0.5 | the snapshot | finite")), qPrintable(rows.join(QLatin1Char('\n'))));
    QVERIFY(std::any_of(rows.begin(), rows.end(), [](const QString &r) {
        return r.startsWith(QStringLiteral("lr=0.5 | the step | non-finite"));
    }));
}

// A replay still computing when the run it replays is closed reports nothing to the next run.
void TestReplayWindow::aReplayOfARunClosedIsDropped()
{
    MainWindow live(newLiveSession), opened(newLiveSession);
    QVERIFY(openedLargeLrMse(live, opened));
    ReplayView *view = opened.originPanel()->replay();
    QSignalSpy dropped(opened.replayRunner(), &ReplayRunner::discarded);
    QSignalSpy finished(opened.replayRunner(), &ReplayRunner::finished);
    view->findChild<QPushButton *>(QStringLiteral("replayStep"))->click();
    QVERIFY(opened.replayRunner()->running());
    opened.closeRun();  // back to training live, while the replay computes
    QVERIFY(!opened.replayRunner()->running());
    QVERIFY(dropped.wait(60000));
    QCOMPARE(finished.count(), 0);
    QVERIFY2(view->verdictText().isEmpty(), qPrintable(view->verdictText()));
    QVERIFY(!opened.showingRecordedRun());
}

void TestReplayWindow::saveThisStepKeepsACapsule()
{
    MainWindow live(newLiveSession);
    live.selectScenario(QStringLiteral("safe-training"));
    live.setSteps(1000000);
    QVERIFY(live.startRun());
    QTRY_VERIFY(live.action(QStringLiteral("pause"))->isEnabled());
    live.action(QStringLiteral("pause"))->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(live.controller().state() == SessionState::Paused, 30000);
    QTRY_VERIFY(live.action(QStringLiteral("saveStep"))->isEnabled());
    const int next = live.recordsShown();
    live.action(QStringLiteral("saveStep"))->trigger();
    live.action(QStringLiteral("step"))->trigger();  // the next step computed is the one kept
    QTRY_VERIFY_WITH_TIMEOUT(live.recordsShown() > next, 30000);
    QTRY_VERIFY(live.action(QStringLiteral("stop"))->isEnabled());
    QVERIFY(runToEnd(live, [&] { live.action(QStringLiteral("stop"))->trigger(); }));
    const std::vector<CapsuleEntry> capsules = runFileCapsules(live.runFile().toStdString());
    QCOMPARE(int(capsules.size()), 1);
    QCOMPARE(capsules[0].reason, std::string(kCapsuleAsked));
    // The next step computed after the request (one in flight when the pause came, or the step
    // asked for), no later than the last of the run, stopped right after it.
    QVERIFY(capsules[0].step >= next);
    QVERIFY(capsules[0].step <= RunFile(live.runFile().toStdString()).lastStep());
}

// The replay's notes and what-ifs are the core's sentences, composed in the window's language.
void TestReplayWindow::theReplaySpeaksChinese()
{
    QVERIFY(setLanguage(QStringLiteral("zh_CN"), false));
    MainWindow live(newLiveSession), opened(newLiveSession);
    QVERIFY(openedLargeLrMse(live, opened));
    ReplayView *view = opened.originPanel()->replay();
    view->findChild<QPushButton *>(QStringLiteral("replayStep"))->click();
    QTRY_VERIFY_WITH_TIMEOUT(view->verdictText().startsWith(QStringLiteral("第 8 步")), 60000);
    QVERIFY2(view->verdictText().contains(QStringLiteral("不是特定的样本：这一步单独用其中任何一个样本都会失败")),
             qPrintable(view->verdictText()));
    const QStringList rows = view->whatIfRows();
    QVERIFY2(rows.contains(QStringLiteral("lr=0.5 | 这一步 | 非有限 (在 fc2 的前向中出现非有限值)")),
             qPrintable(rows.join(QLatin1Char('\n'))));
    QVERIFY2(std::any_of(rows.begin(), rows.end(),
                         [](const QString &r) { return r.endsWith(QStringLiteral("(第 8 步出现非有限值)")); }),
             qPrintable(rows.join(QLatin1Char('\n'))));
}

QTEST_MAIN(TestReplayWindow)

// A loop recorded by nanscope.record (python/tests/replay_loops.py: a NaN in dataset row 13 at step
// 0): the window cannot compute the user's loop, so Replay this step first says how to, then shows
// what `python -m nanscope replay` stored in the capsule.
void TestReplayWindow::aPythonRunShowsTheReplayStoredInIt()
{
    QString tried;
    const QString python = testing::pythonWithTorch(&tried);
    if (python.isEmpty() && NANSCOPE_PYTHON_TORCH_OPTIONAL)
        QSKIP(qPrintable(QStringLiteral("no python3 with torch (tried %1)").arg(tried)));
    QVERIFY2(!python.isEmpty(), qPrintable(QStringLiteral("no python3 with torch (tried %1)").arg(tried)));
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("loop.nsrun"));
    QString failed = runPython(python, {QStringLiteral("-c"),
                                        QStringLiteral("import sys, replay_loops as L; m, o = L.build_model(); "
                                                       "L.record(sys.argv[1], m, o, 3)"),
                                        path});
    QVERIFY2(failed.isEmpty(), qPrintable(failed));

    MainWindow opened(newLiveSession);
    QVERIFY(runToEnd(opened, [&] { opened.openRun(path); }));
    ReplayView *view = opened.originPanel()->replay();
    auto *button = view->findChild<QPushButton *>(QStringLiteral("replayStep"));
    QVERIFY(button && button->isEnabled());
    button->click();
    QTRY_VERIFY_WITH_TIMEOUT(view->verdictText().startsWith(QStringLiteral("Cannot replay")), 60000);
    QVERIFY2(view->verdictText().contains(QStringLiteral("has not been replayed yet")), qPrintable(view->verdictText()));
    QVERIFY(view->verdictText().contains(QStringLiteral("python3 -m nanscope replay")));

    failed = runPython(python, {QStringLiteral("-m"), QStringLiteral("nanscope"), QStringLiteral("replay"), path,
                                QStringLiteral("--script"), QStringLiteral(NANSCOPE_PYTHON_DIR "/tests/replay_loops.py")});
    QVERIFY2(failed.isEmpty(), qPrintable(failed));
    QTRY_VERIFY_WITH_TIMEOUT(button->isEnabled(), 60000);
    button->click();
    QTRY_VERIFY_WITH_TIMEOUT(view->verdictText().startsWith(QStringLiteral("Step 0 ")), 60000);
    QVERIFY2(view->verdictText().contains(QStringLiteral("Reproduced bit for bit")), qPrintable(view->verdictText()));
    const QStringList rows = view->whatIfRows();
    QVERIFY2(rows.contains(QStringLiteral("without samples 13 | the step | finite")),
             qPrintable(rows.join(QLatin1Char('\n'))));
}

#include "tst_replay_window.moc"
