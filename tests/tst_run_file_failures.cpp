// Run files that go wrong: a writer killed with SIGKILL, a writer in another process followed to
// its end, bad files refused with one line naming the file and the cause, an unwritable path, a
// file that is not a run file never replaced by one unless asked.
#include "cli_runner.h"
#include "record_compare.h"
#include "run_collector.h"
#include "run_file_helpers.h"

#include "nanscope/recorded_run.h"
#include "nanscope/run_file.h"
#include "nanscope/run_recorder.h"
#include "nanscope/scenario.h"
#include "nanscope/session.h"

#include <sqlite3.h>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <atomic>
#include <cmath>
#include <limits>
#include <sstream>

using namespace nanscope;
using namespace nanscope::testing;

class TestRunFileFailures : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void killedWriterLeavesReadableFile();
    void followSeesAnotherProcessWrite();
    void badFiles_data();
    void badFiles();
    void corpusOfBrokenFiles_data();
    void corpusOfBrokenFiles();
    void unwritablePathFailsAtOnce();
    void onlyRunFilesAreReplaced_data();
    void onlyRunFilesAreReplaced();
    void commandLineRefusesToReplaceADocument();

private:
    QString file(const QString &name) const { return dir_.filePath(name); }
    QTemporaryDir dir_;
};

void TestRunFileFailures::killedWriterLeavesReadableFile()
{
    const QString path = file("killed.nsrun");
    QProcess child;
    child.setStandardOutputFile(QProcess::nullDevice());
    child.setStandardErrorFile(QProcess::nullDevice());
    child.start(NANSCOPE_EXE, {"run", "--scenario", "safe-training", "--steps", "1000000", "--record", path});
    QVERIFY(child.waitForStarted());
    QVERIFY(waitForSteps(path, 20, 60000) >= 20);
    // The writer's heartbeat goes up while it lives (about once a second).
    QTRY_VERIFY_WITH_TIMEOUT(RunFile(path.toStdString()).info().heartbeat >= 1, 30000);
    const std::int64_t committedBefore = RunFile(path.toStdString()).stats().steps;
    QThread::msleep(1100);  // the kill comes a second after the count
    child.kill();           // SIGKILL
    QVERIFY(child.waitForFinished());
    QCOMPARE(child.exitStatus(), QProcess::CrashExit);

    RunFile f(path.toStdString());
    const RunFileStats st = f.stats();
    QVERIFY2(st.steps >= committedBefore, qPrintable(QString("%1 < %2").arg(st.steps).arg(committedBefore)));
    QVERIFY(st.steps > committedBefore);  // the writer kept committing in that second
    QCOMPARE(st.firstStep, 0);
    QCOMPARE(st.lastStep, int(st.steps - 1));  // no hole
    QVERIFY(!f.info().finished);

    const auto report = nanscope::testing::run({"report", path, "--json"});
    QCOMPARE(report.code, 0);
    QCOMPARE(report.objects.size(), 1);
    QCOMPARE(report.objects[0]["finished"].toBool(true), false);
    QCOMPARE(report.objects[0]["steps_run"].toInt(), int(st.steps));
    const auto text = nanscope::testing::run({"report", path});
    QVERIFY(text.out.contains("did not finish"));

    // Followed, the file of a dead writer ends as unfinished once its heartbeat stood still.
    RecordedRunOptions options;
    options.pollMs = 50;
    options.writerGoneMs = 1500;
    RecordedRun followed(path.toStdString(), options);
    RunCollector c;
    followed.addObserver(&c);
    QElapsedTimer t;
    t.start();
    followed.start();
    QVERIFY(followed.wait(30000));
    followed.removeObserver(&c);
    QVERIFY(t.elapsed() >= 1500);
    QCOMPARE(std::int64_t(c.records.size()), st.steps);
    QVERIFY(!c.summary.finished);
    QCOMPARE(c.summary.stepsRun, int(st.steps));
    QVERIFY(!c.events.empty());
    QVERIFY(QString::fromStdString(c.events.back().text).contains("stopped without finishing"));
}

void TestRunFileFailures::followSeesAnotherProcessWrite()
{
    const QString path = file("followed.nsrun");
    const int steps = 3000;
    QProcess child;
    child.setStandardOutputFile(QProcess::nullDevice());
    child.start(NANSCOPE_EXE,
                {"run", "--scenario", "safe-training", "--steps", QString::number(steps), "--record", path, "--json"});
    QVERIFY(child.waitForStarted());
    QVERIFY(waitForSteps(path, 0, 60000) >= 0);
    RecordedRunOptions options;
    options.pollMs = 50;
    RecordedRun run(path.toStdString(), options);
    const std::int64_t atOpen = RunFile(path.toStdString()).stats().steps;
    RunCollector c;
    run.addObserver(&c);
    run.start();
    QVERIFY(run.wait(120000));
    run.removeObserver(&c);
    QVERIFY(child.waitForFinished(60000));
    QCOMPARE(child.exitCode(), 0);

    QVERIFY2(atOpen < steps, "the child finished before the reader opened the file");
    QCOMPARE(int(c.records.size()), steps);
    for (int i = 0; i < steps; ++i)
        QCOMPARE(c.records[std::size_t(i)]->step, i);
    QVERIFY(c.summary.finished);
    QCOMPARE(c.summary.stepsRun, steps);
    QCOMPARE(c.states.front(), SessionState::Running);
    QCOMPARE(c.states.back(), SessionState::Finished);
}

// An observer that takes nothing in: the player stops handing it records at the backlog limit.
void TestRunFileFailures::badFiles_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("cause");
    QTest::newRow("missing") << "missing"
                             << "no such file";
    QTest::newRow("folder") << "folder"
                            << "is a folder";
    QTest::newRow("empty") << "empty"
                           << "empty";
    QTest::newRow("text") << "text"
                          << "not a NaNScope run file";
    QTest::newRow("other sqlite database") << "other-db"
                                           << "not a NaNScope run file";
    QTest::newRow("truncated") << "truncated"
                               << "damaged";
    QTest::newRow("corrupted pages") << "corrupted"
                                     << "damaged";
    QTest::newRow("a format-2 column dropped") << "no-column"
                                               << "the file is damaged (the steps table has no column grad_norm)";
    QTest::newRow("newer version") << "newer"
                                   << "newer NaNScope";
    QTest::newRow("locked by a writer") << "locked"
                                        << "locked";
}

void TestRunFileFailures::badFiles()
{
    QFETCH(QString, kind);
    QFETCH(QString, cause);
    // A real run file to break.
    const QString good = file("good.nsrun");
    if (!QFile::exists(good)) {
        RunConfig config;
        config.scenario = "safe-training";
        config.steps = 60;
        recordRun(config, good.toStdString());
    }
    const QString path = file("bad-" + kind + ".nsrun");
    const QByteArray bytes = bytesOf(good);
    QVERIFY(bytes.size() > 16 * 4096);
    sqlite3 *lock = nullptr;
    if (kind == "folder") {
        QVERIFY(QDir().mkpath(path));
    } else if (kind == "empty") {
        writeBytes(path, {});
    } else if (kind == "text") {
        writeBytes(path, "step,loss\n0,1.5\n");
    } else if (kind == "other-db") {
        sqlite3 *db = nullptr;
        sqlite3_open(path.toUtf8().constData(), &db);
        sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr);
        sqlite3_close(db);
    } else if (kind == "truncated") {
        writeBytes(path, bytes.left(bytes.size() / 2));
    } else if (kind == "corrupted") {
        QByteArray broken = bytes;
        for (int i = 3 * 4096; i < broken.size(); ++i)
            broken[i] = char(0xA5 ^ (i * 31));
        writeBytes(path, broken);
    } else if (kind == "newer" || kind == "locked" || kind == "no-column") {
        writeBytes(path, bytes);
        sqlite3_open(path.toUtf8().constData(), &lock);
        if (kind == "no-column") {  // read as a format-1 file would be, it showed zero norms
            QCOMPARE(sqlite3_exec(lock, "ALTER TABLE steps DROP COLUMN grad_norm", nullptr, nullptr, nullptr), SQLITE_OK);
            sqlite3_close(lock);
            lock = nullptr;
        } else if (kind == "newer") {
            QCOMPARE(sqlite3_exec(lock, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
            sqlite3_close(lock);
            lock = nullptr;
        } else {
            QCOMPARE(sqlite3_exec(lock, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
        }
    }

    const bool isFile = QFileInfo(path).isFile();
    const QByteArray before = isFile ? bytesOf(path) : QByteArray();

    // The reader: a RunFileError that names the file and the cause, whatever is read.
    QString message;
    try {
        RunFile f(path.toStdString());
        readAll(f);
        f.readEvents(0);
    } catch (const RunFileError &e) {
        message = QString::fromStdString(e.what());
    }
    QVERIFY2(message.startsWith(path + ": "), qPrintable(message));
    QVERIFY2(message.contains(cause), qPrintable(message));
    QVERIFY(!message.contains('\n'));

    // The command line: one line on stderr, exit 1.
    const auto report = nanscope::testing::run({"report", path});
    QCOMPARE(report.code, 1);
    QVERIFY2(report.err.startsWith("nanscope: " + path + ": "), qPrintable(report.err));
    QCOMPARE(report.err.count('\n'), 1);
    if (lock) {
        sqlite3_exec(lock, "ROLLBACK", nullptr, nullptr, nullptr);
        sqlite3_close(lock);
    }
    if (isFile)  // neither the reader nor the command line wrote to the file
        QVERIFY(bytesOf(path) == before);
}

// The fuzzer's seeds (tests/data/run-files): bad-* are refused with one line, good-* are read,
// whatever odd values they hold.
void TestRunFileFailures::corpusOfBrokenFiles_data()
{
    QTest::addColumn<QString>("path");
    const QDir corpus(NANSCOPE_RUN_FILE_CORPUS);
    const QStringList files = corpus.entryList({"*.nsrun"}, QDir::Files, QDir::Name);
    QVERIFY(files.size() >= 8);
    for (const QString &f : files)
        QTest::newRow(qPrintable(f)) << corpus.filePath(f);
}

void TestRunFileFailures::corpusOfBrokenFiles()
{
    QFETCH(QString, path);
    // A copy: the reader must not need to write, and the corpus must stay as committed.
    const QString copy = file("corpus-" + QFileInfo(path).fileName());
    QFile::remove(copy);
    QVERIFY(QFile::copy(path, copy));
    const bool good = QFileInfo(path).fileName().startsWith("good-");
    QString message;
    try {
        RunFile f(copy.toStdString());
        readAll(f);
        f.readEvents(0);
    } catch (const RunFileError &e) {
        message = QString::fromStdString(e.what());
    }
    QCOMPARE(message.isEmpty(), good);
    const auto report = nanscope::testing::run({"report", copy});
    QCOMPARE(report.code, good ? 0 : 1);
    if (!good) {
        QVERIFY2(report.err.startsWith("nanscope: " + copy + ": "), qPrintable(report.err));
        QCOMPARE(report.err.count('\n'), 1);
    }
    QCOMPARE(bytesOf(copy), bytesOf(path));  // reading wrote nothing
}

void TestRunFileFailures::unwritablePathFailsAtOnce()
{
    const QString path = file("no-such-folder/run.nsrun");
    QString message;
    try {
        RunRecorder recorder(path.toStdString());
    } catch (const RunFileError &e) {
        message = QString::fromStdString(e.what());
    }
    QVERIFY2(message.startsWith(path + ": "), qPrintable(message));
    const auto run = nanscope::testing::run({"run", "--scenario", "large-lr-mse", "--steps", "3", "--record", path});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains("cannot record the run"), qPrintable(run.err));
    QVERIFY(run.out.isEmpty() || !run.out.contains("== report =="));
}

void TestRunFileFailures::onlyRunFilesAreReplaced_data()
{
    QTest::addColumn<QByteArray>("content");  // "run file": one written by the recorder
    QTest::addColumn<bool>("overwrite");
    QTest::addColumn<bool>("replaced");
    QTest::newRow("a script") << QByteArray("#!/bin/sh\necho my script\n") << false << false;
    QTest::newRow("a database that is not a run file")
        << QByteArray("SQLite format 3\0", 16) + QByteArray(84, '\0') << false << false;
    QTest::newRow("an empty file") << QByteArray() << false << true;
    QTest::newRow("a run file") << QByteArray("run file") << false << true;
    QTest::newRow("a script, --overwrite") << QByteArray("#!/bin/sh\necho my script\n") << true << true;
}

void TestRunFileFailures::onlyRunFilesAreReplaced()
{
    QFETCH(QByteArray, content);
    QFETCH(bool, overwrite);
    QFETCH(bool, replaced);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("notes.txt"));
    if (content == "run file")
        RunRecorder(path.toStdString()).close();
    else
        writeBytes(path, content);
    const QByteArray before = bytesOf(path);
    RecorderOptions options;
    options.overwrite = overwrite;
    QString message;
    try {
        RunRecorder recorder(path.toStdString(), options);
        recorder.close();
    } catch (const RunFileError &e) {
        message = QString::fromStdString(e.what());
    }
    if (replaced) {
        QVERIFY2(message.isEmpty(), qPrintable(message));
        QCOMPARE(bytesOf(path).mid(68, 4), QByteArray("NSRN"));  // a run file's application id now
    } else {
        QCOMPARE(message, path + QStringLiteral(" exists and is not a NaNScope run file: not replaced (to replace it "
                                                "on purpose: --overwrite)"));
        QCOMPARE(bytesOf(path), before);
    }
    // Written beside and renamed: nothing is left next to it.
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{QStringLiteral("notes.txt")});
}

void TestRunFileFailures::commandLineRefusesToReplaceADocument()
{
    const QString path = file("README.md");
    const QByteArray readme("# My project\n\nNotes that took a week to write.\n");
    writeBytes(path, readme);
    const auto refused =
        nanscope::testing::run({"run", "--scenario", "large-lr-mse", "--steps", "3", "--record", path});
    QCOMPARE(refused.code, 1);
    QVERIFY2(refused.err.contains(path + " exists and is not a NaNScope run file: not replaced"),
             qPrintable(refused.err));
    QCOMPARE(bytesOf(path), readme);
    const auto replaced = nanscope::testing::run(
        {"run", "--scenario", "large-lr-mse", "--steps", "3", "--record", path, "--overwrite"});
    QCOMPARE(replaced.code, 0);
    QCOMPARE(RunFile(path.toStdString()).stats().steps, std::int64_t(3));
}

QTEST_GUILESS_MAIN(TestRunFileFailures)
#include "tst_run_file_failures.moc"
