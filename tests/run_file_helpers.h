#pragma once
// Test helpers for run files: record a session's run beside a collector, read a file back whole,
// raw bytes in and out, and wait for another process's file to fill.
#include "run_collector.h"

#include "nanscope/run_file.h"
#include "nanscope/run_recorder.h"
#include "nanscope/session.h"

#include <QElapsedTimer>
#include <QFile>
#include <QThread>
#include <QtTest>

#include <functional>
#include <limits>
#include <memory>

namespace nanscope::testing {

// A scenario's run of `steps` steps (0: its default).
inline RunConfig scenario(const std::string &id, int steps = 0)
{
    RunConfig c;
    c.scenario = id;
    c.steps = steps;
    return c;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Runs `config` on a session with a recorder beside the collector; the recorder is closed after.
inline std::unique_ptr<RunCollector> recordRun(const RunConfig &config, const std::string &path,
                                               const std::function<void(Session &)> &during = {})
{
    auto c = std::make_unique<RunCollector>();
    Session session;
    RunRecorder recorder(path);
    session.addObserver(c.get());
    session.addObserver(&recorder);
    std::string error;
    if (!session.start(config, &error)) {
        c->summary.error = error;
        return c;
    }
    if (during)
        during(session);
    noteUnfinished(*c, session.wait(300000));
    session.removeObserver(c.get());
    session.removeObserver(&recorder);
    recorder.close();
    return c;
}

inline std::vector<StepRecordPtr> readAll(const RunFile &file)
{
    std::vector<StepRecordPtr> out;
    for (;;) {
        const auto chunk = file.readSteps(out.empty() ? -1 : out.back()->step, 1000);
        out.insert(out.end(), chunk.begin(), chunk.end());
        if (chunk.size() < 1000)
            return out;
    }
}

inline QByteArray bytesOf(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

inline void writeBytes(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(bytes);
}

// Polls until a run file at `path` opens and holds at least `steps` steps.
inline std::int64_t waitForSteps(const QString &path, std::int64_t steps, int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < timeoutMs) {
        try {
            RunFile f(path.toStdString());
            const std::int64_t n = f.stats().steps;
            if (n >= steps)
                return n;
        } catch (const RunFileError &) {
        }
        QThread::msleep(20);
    }
    return -1;
}

}  // namespace nanscope::testing
