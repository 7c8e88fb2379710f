#pragma once
// Data-parallel jobs in tests: `nanscope` processes started as `run --ranks N` or as ranks that
// torchrun's variables describe, their JSON lines parsed back, their run files read.
#include "nanscope/run_file.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStringList>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

namespace nanscope::testing {

inline int freePort()
{
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a);
    ::getsockname(s, reinterpret_cast<sockaddr *>(&a), &len);
    ::close(s);
    return ntohs(a.sin_port);
}

struct Finished {
    int code = -1;
    QString out, err;
    QList<QJsonObject> objects;
};

inline Finished finish(QProcess &p, int timeoutMs = 120000)
{
    Finished f;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
    }
    f.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    f.out = QString::fromUtf8(p.readAllStandardOutput());
    f.err = QString::fromUtf8(p.readAllStandardError());
    for (const QString &line : f.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const QJsonDocument d = QJsonDocument::fromJson(line.toUtf8());
        if (d.isObject())
            f.objects.push_back(d.object());
    }
    return f;
}

inline Finished runNanscope(const QStringList &args,
                            const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(NANSCOPE_EXE), args);
    return finish(p);
}

// A rank started as torchrun would start it.
inline void startRank(QProcess &p, int rank, int world, int port, const QStringList &args)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("RANK"), QString::number(rank));
    env.insert(QStringLiteral("LOCAL_RANK"), QString::number(rank));
    env.insert(QStringLiteral("WORLD_SIZE"), QString::number(world));
    env.insert(QStringLiteral("MASTER_ADDR"), QStringLiteral("127.0.0.1"));
    env.insert(QStringLiteral("MASTER_PORT"), QString::number(port));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(NANSCOPE_EXE), args);
}

inline std::vector<StepRecordPtr> stepsOf(const QString &file)
{
    return RunFile(file.toStdString()).readSteps(-1, 1 << 20);
}

inline QStringList texts(const Finished &f, int rank, const QString &kind)
{
    QStringList out;
    for (const QJsonObject &o : f.objects)
        if (o.value(QLatin1String("rank")).toInt(-1) == rank && o.value(QLatin1String("type")).toString() == "event" &&
            o.value(QLatin1String("kind")).toString() == kind)
            out << o.value(QLatin1String("text")).toString();
    return out;
}

}  // namespace nanscope::testing
