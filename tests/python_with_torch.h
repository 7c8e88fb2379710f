#pragma once
// Test helper: the Python that has torch (Debian's python3-torch), for the suites that run Python.
#include <QProcess>
#include <QString>
#include <QStringList>

namespace nanscope::testing {

// The first interpreter that imports torch: $NANSCOPE_PYTHON, then Debian's, then PATH's (a
// pyenv shim on PATH may hide the Debian package). Empty, with those tried, when none does.
inline QString pythonWithTorch(QString *tried)
{
    QStringList candidates = {QStringLiteral("/usr/bin/python3"), QStringLiteral("python3")};
    if (qEnvironmentVariableIsSet("NANSCOPE_PYTHON"))
        candidates.prepend(qEnvironmentVariable("NANSCOPE_PYTHON"));
    for (const QString &python : candidates) {
        QProcess p;
        p.start(python, {QStringLiteral("-c"), QStringLiteral("import torch")});
        if (p.waitForFinished(60000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0)
            return python;
        *tried += python + QStringLiteral(" ");
    }
    return {};
}

}  // namespace nanscope::testing
