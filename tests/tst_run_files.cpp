// The window's run files without a window: a live run recorded into the runs folder (the run's
// records in the file, exported as CSV, the folder pruned to the newest RunFiles::kRecordedRunsKept), a recording
// dropped when its run did not start, the recent runs (newest first, no duplicates, at most
// kRecentRunsKept), a copy saved, and the errors when there is nothing to save.
#include "window/run_files.h"

#include "nanscope/pushed_run_source.h"
#include "nanscope/run_file.h"

#include <QDir>
#include <QFile>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace nanscope;

class TestRunFiles : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void aLiveRunIsRecordedIntoTheRunsFolder();
    void theRunsFolderKeepsTheNewest();
    void aRecordingWhoseRunDidNotStartGoes();
    void recentRunsAreNewestFirstWithoutDuplicates();
    void nothingToSaveIsSaid();
};

namespace {

struct Pushed {
    PushedRunSource *source = nullptr;
    SessionController controller{[this] {
        auto s = std::make_unique<PushedRunSource>();
        source = s.get();
        return s;
    }};
};

StepRecordPtr stepOf(int step, double loss)
{
    auto r = std::make_shared<StepRecord>();
    r->step = step;
    r->run = 1;
    r->loss = loss;
    r->layers.resize(1);
    return r;
}

}  // namespace

void TestRunFiles::init()
{
    QDir(RunFiles::runsFolder()).removeRecursively();
    QSettings().remove(QStringLiteral("runs/recent"));
}

void TestRunFiles::aLiveRunIsRecordedIntoTheRunsFolder()
{
    Pushed live;
    RunFiles files(live.controller);
    QString error;
    QVERIFY2(files.recordLiveRun(QStringLiteral("demo"), &error), qPrintable(error));
    QVERIFY(files.recording());
    QVERIFY(files.path().startsWith(RunFiles::runsFolder() + QLatin1Char('/')));
    QVERIFY(files.path().endsWith(QStringLiteral("-demo.nsrun")));
    live.source->beginRun(1, {Layer{0, "fc", "Linear", -1}});
    for (int step = 0; step < 3; ++step)
        live.source->pushStep(stepOf(step, 1.0 / (step + 1)));
    RunSummary summary;
    summary.run = 1;
    live.source->finishRun(summary);
    files.flush();
    const RunFile file(files.path().toStdString());
    QCOMPARE(int(file.stats().steps), 3);

    QTemporaryDir elsewhere;
    const QString csv = elsewhere.filePath(QStringLiteral("steps.csv"));
    QVERIFY2(files.exportCsv(csv, &error), qPrintable(error));
    QFile exported(csv);
    QVERIFY(exported.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = exported.readAll().trimmed().split('\n');
    QCOMPARE(lines.size(), 4);  // the header and a line a step
    QVERIFY(lines[0].startsWith("step,"));
    QVERIFY(lines[3].startsWith("2,"));
    const QString copy = elsewhere.filePath(QStringLiteral("copy.nsrun"));
    QVERIFY2(files.saveAs(copy, &error), qPrintable(error));
    QCOMPARE(int(RunFile(copy.toStdString()).stats().steps), 3);
    files.stopRecording();
    QVERIFY(!files.recording());
    QVERIFY(QFile::exists(files.path()));  // a recording that ended keeps its file
}

void TestRunFiles::theRunsFolderKeepsTheNewest()
{
    QDir().mkpath(RunFiles::runsFolder());
    for (int i = 0; i < RunFiles::kRecordedRunsKept + 5; ++i) {
        QFile f(RunFiles::runsFolder() + QStringLiteral("/old-%1.nsrun").arg(i));
        QVERIFY(f.open(QIODevice::WriteOnly));
    }
    Pushed live;
    RunFiles files(live.controller);
    QVERIFY(files.recordLiveRun(QStringLiteral("new"), nullptr));
    const QStringList kept = QDir(RunFiles::runsFolder()).entryList({QStringLiteral("*.nsrun")}, QDir::Files);
    QCOMPARE(kept.size(), RunFiles::kRecordedRunsKept);  // the new one and the newest of the others
    QVERIFY(kept.contains(QFileInfo(files.path()).fileName()));
}

void TestRunFiles::aRecordingWhoseRunDidNotStartGoes()
{
    Pushed live;
    RunFiles files(live.controller);
    QVERIFY(files.recordLiveRun(QStringLiteral("refused"), nullptr));
    const QString path = files.path();
    QVERIFY(QFile::exists(path));
    files.dropRecording();
    QVERIFY(!QFile::exists(path));
    QVERIFY(files.path().isEmpty());
    QVERIFY(!files.recording());
}

void TestRunFiles::recentRunsAreNewestFirstWithoutDuplicates()
{
    Pushed live;
    RunFiles files(live.controller);
    QTemporaryDir dir;
    QStringList opened;
    for (int i = 0; i < RunFiles::kRecentRunsKept + 2; ++i) {
        opened << dir.filePath(QStringLiteral("run-%1.nsrun").arg(i));
        files.opened(opened.last());
        QCOMPARE(files.path(), opened.last());
    }
    files.opened(opened[5]);  // again: first, once
    QStringList recent = files.recentRuns();
    QCOMPARE(recent.size(), RunFiles::kRecentRunsKept);
    QCOMPARE(recent.value(0), opened[5]);
    QCOMPARE(recent.count(opened[5]), 1);
    QCOMPARE(recent.value(1), opened.last());
    QVERIFY(!recent.contains(opened[0]));  // the oldest went
    files.clear();
    QVERIFY(files.path().isEmpty());
    QCOMPARE(files.recentRuns(), recent);  // closing a run does not forget it
}

void TestRunFiles::nothingToSaveIsSaid()
{
    Pushed live;
    RunFiles files(live.controller);
    QString error;
    QVERIFY(!files.saveAs(QStringLiteral("/tmp/never.nsrun"), &error));
    QCOMPARE(error, QStringLiteral("there is no run to save yet"));
    QVERIFY(!files.exportCsv(QStringLiteral("/tmp/never.csv"), &error));
    QVERIFY(error.contains(QStringLiteral("there is nothing to export")));
    QVERIFY(!QFile::exists(QStringLiteral("/tmp/never.csv")));
}

int main(int argc, char **argv)
{
    QStandardPaths::setTestModeEnabled(true);  // the runs folder and QSettings in a test location
    QCoreApplication app(argc, argv);
    app.setApplicationName(QStringLiteral("tst_run_files"));
    TestRunFiles t;
    return QTest::qExec(&t, argc, argv);
}
#include "tst_run_files.moc"
