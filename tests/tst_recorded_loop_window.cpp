// A loop another program trained and recorded (the Python recorder writes a "recorder" object into
// the run's config, no scenario and no model): the window opens it, its control panel names the
// loop instead of a demo, and Start with it selected is refused with why.
#include "widgets/control_panel.h"
#include "window/main_window.h"

#include "nanscope/run_file.h"

#include "run_file_helpers.h"
#include "window_runs.h"

#include <QComboBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>

using namespace nanscope;
using nanscope::testing::recordRun;
using nanscope::testing::runToEnd;

class TestRecordedLoopWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
    void theLoopIsNamedAndNotTrainedAgain();
};

void TestRecordedLoopWindow::theLoopIsNamedAndNotTrainedAgain()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("loop.nsrun")).toStdString();
    recordRun(nanscope::testing::scenario("large-lr-mse", 6), path);
    // What nanscope.record writes in place of a scenario (python/nanscope/recorder.py).
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    QCOMPARE(sqlite3_exec(db,
                          "UPDATE run SET scenario = NULL, config = json_set(json_remove(config, '$.scenario'), "
                          "'$.recorder', json('{\"kind\": \"python\", \"name\": \"train.py\"}'))",
                          nullptr, nullptr, nullptr),
             SQLITE_OK);
    sqlite3_close(db);
    QVERIFY(RunFile(path).info().config.isRecordedLoop());

    MainWindow w;
    w.selectScenario(QStringLiteral("nan-input"));  // whatever was picked before must not show
    QVERIFY(runToEnd(w, [&] { w.openRun(QString::fromStdString(path)); }));
    auto *picker = w.controlPanel()->findChild<QComboBox *>();
    QVERIFY(picker);
    QCOMPARE(picker->currentText(), QStringLiteral("Recorded loop: train.py"));
    QCOMPARE(w.controlPanel()->runName(), QStringLiteral("train"));
    QCOMPARE(w.controlPanel()->scenario(), QString());
    const RunConfig again = w.controlPanel()->runConfig();
    QVERIFY(again.isRecordedLoop());
    const std::string why = invalidRunConfigReason(again);
    QVERIFY2(why.find("cannot train it again") != std::string::npos, why.c_str());
}

QTEST_MAIN(TestRecordedLoopWindow)
#include "tst_recorded_loop_window.moc"
