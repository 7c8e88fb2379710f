// What an installed NaNScope gives the desktop (packaging/): the desktop entry and the AppStream
// metadata pass their validators, the run file's MIME type names a recorded run by its content
// and not a plain SQLite file, and both programs say their version with LibTorch's.
#include <QMimeDatabase>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>

namespace {

struct Finished {
    int code = -1;
    QString out;
    QString err;
};

Finished runProgram(const QString &program, const QStringList &args,
                    const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(program, args);
    if (!p.waitForStarted(10000))
        return {-1, {}, QStringLiteral("%1 did not start: install it (tools/install-deps.sh --tests)").arg(program)};
    p.waitForFinished(120000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

// An SQLite database with one table and the given application_id (0: none).
void writeSqlite(const QString &path, int applicationId)
{
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
    const QByteArray sql = "PRAGMA application_id = " + QByteArray::number(applicationId) +
                           "; CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT);";
    QCOMPARE(sqlite3_exec(db, sql.constData(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
}

}  // namespace

class TestDesktopIntegration : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void validators_data();
    void validators();
    void runFileType_data();
    void runFileType();
    void versions_data();
    void versions();

private:
    QTemporaryDir dataHome_;  // share/mime: the MIME database with the run file's type, as installed
    QString runFile_;
};

void TestDesktopIntegration::initTestCase()
{
    QVERIFY(dataHome_.isValid());
    // A MIME database as the package leaves it: shared-mime-info's types and ours compiled into one
    // (update-mime-database sorts their magic by priority), the only one the readers see. A type
    // in a separate user database would not do: Qt 6.4 lets the system's SQLite magic win over it.
    const QString packages = dataHome_.filePath(QStringLiteral("share/mime/packages"));
    QVERIFY(QDir().mkpath(packages));
    QVERIFY(QDir().mkpath(dataHome_.filePath(QStringLiteral("home"))));
    QVERIFY(QFile::copy(QStringLiteral(NANSCOPE_MIME_XML), packages + QStringLiteral("/nanscope.xml")));
    QVERIFY2(QFile::copy(QStringLiteral("/usr/share/mime/packages/freedesktop.org.xml"),
                         packages + QStringLiteral("/freedesktop.org.xml")),
             "shared-mime-info's types are missing: install shared-mime-info (tools/install-deps.sh --tests)");
    const Finished update =
        runProgram(QStringLiteral("update-mime-database"), {dataHome_.filePath(QStringLiteral("share/mime"))});
    QVERIFY2(update.code == 0, qPrintable(update.err));
    // Both are read when the first QMimeDatabase is made: set them before any.
    qputenv("XDG_DATA_DIRS", dataHome_.filePath(QStringLiteral("share")).toLocal8Bit());
    qputenv("XDG_DATA_HOME", dataHome_.filePath(QStringLiteral("home")).toLocal8Bit());

    runFile_ = dataHome_.filePath(QStringLiteral("recorded.nsrun"));
    const Finished run = runProgram(QStringLiteral(NANSCOPE_EXE), {"run", "--scenario", "nan-input", "--steps", "2",
                                                                    "--record", runFile_});
    QVERIFY2(run.code == 0, qPrintable(run.err));
}

void TestDesktopIntegration::validators_data()
{
    QTest::addColumn<QString>("program");
    QTest::addColumn<QStringList>("args");
    QTest::addRow("desktop entry") << QStringLiteral("desktop-file-validate")
                                   << QStringList{QStringLiteral(NANSCOPE_DESKTOP_ENTRY)};
    QTest::addRow("AppStream metainfo") << QStringLiteral("appstreamcli")
                                        << QStringList{"validate", "--no-net", "--pedantic",
                                                       QStringLiteral(NANSCOPE_METAINFO)};
    QTest::addRow("MIME XML") << QStringLiteral("xmllint") << QStringList{"--noout", QStringLiteral(NANSCOPE_MIME_XML)};
}

void TestDesktopIntegration::validators()
{
    QFETCH(QString, program);
    QFETCH(QStringList, args);
    const Finished f = runProgram(program, args);
    QVERIFY2(f.code == 0, qPrintable(f.out + f.err));
    // desktop-file-validate prints only what is wrong; its one hint (two main categories,
    // Development and Science, as the menu should list it under both) is by choice.
    const QStringList findings = (f.out + f.err).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    for (const QString &line : findings)
        QVERIFY2(!line.contains(QLatin1String("error")) && !line.contains(QLatin1String("warning")) &&
                     !line.startsWith(QLatin1String("W:")) && !line.startsWith(QLatin1String("E:")),
                 qPrintable(line));
}

void TestDesktopIntegration::runFileType_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("applicationId");  // -1: a copy of the recorded run
    QTest::addColumn<QString>("expected");
    const QString run = QStringLiteral("application/x-nanscope-run");
    const QString sqlite = QStringLiteral("application/vnd.sqlite3");
    QTest::addRow("recorded run") << QStringLiteral("copy.nsrun") << -1 << run;
    QTest::addRow("run without its extension") << QStringLiteral("downloaded") << -1 << run;
    QTest::addRow("plain .sqlite") << QStringLiteral("plain.sqlite") << 0 << sqlite;
    QTest::addRow("plain SQLite, no extension") << QStringLiteral("plain") << 0 << sqlite;
    QTest::addRow("another application's id") << QStringLiteral("other") << 0x47504B47 << sqlite;
}

void TestDesktopIntegration::runFileType()
{
    QFETCH(QString, name);
    QFETCH(int, applicationId);
    QFETCH(QString, expected);
    const QString path = dataHome_.filePath(name);
    if (applicationId < 0)
        QVERIFY(QFile::copy(runFile_, path));
    else
        writeSqlite(path, applicationId);
    // Qt's reader (KDE's file managers) and GLib's (GNOME's) read the same database.
    QCOMPARE(QMimeDatabase().mimeTypeForFile(path).name(), expected);
    const Finished gio = runProgram(QStringLiteral("gio"), {"info", "-a", "standard::content-type", path});
    QVERIFY2(gio.code == 0, qPrintable(gio.err));
    QVERIFY2(gio.out.contains(QLatin1String("standard::content-type: ") + expected), qPrintable(gio.out));
}

void TestDesktopIntegration::versions_data()
{
    QTest::addColumn<QString>("program");
    QTest::addColumn<QString>("build");
    QTest::addRow("window") << QStringLiteral(NANSCOPE_EXE) << QStringLiteral("Qt 6\\.\\d+\\.\\d+");
    QTest::addRow("headless") << QStringLiteral(NANSCOPE_HEADLESS_EXE) << QStringLiteral("headless");
}

void TestDesktopIntegration::versions()
{
    QFETCH(QString, program);
    QFETCH(QString, build);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));  // answered without a window
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    const Finished f = runProgram(program, {QStringLiteral("--version")}, env);
    QCOMPARE(f.code, 0);
    const QRegularExpression line(QStringLiteral("^nanscope %1 \\(LibTorch \\d+\\.\\d+\\.\\d+, %2\\)\n$")
                                      .arg(QRegularExpression::escape(QStringLiteral(NANSCOPE_VERSION)), build));
    QVERIFY2(line.match(f.out).hasMatch(), qPrintable(f.out + f.err));
}

QTEST_GUILESS_MAIN(TestDesktopIntegration)
#include "tst_desktop_integration.moc"
