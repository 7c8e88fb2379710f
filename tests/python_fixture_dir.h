#pragma once
// Test helper: the models tests/python_fixtures.py writes with real PyTorch (Debian's python3-torch),
// in a temporary folder of their own. Where no Python imports torch (`make test` installs it) the
// suites fail, or skip with the reason when built with NANSCOPE_PYTHON_TORCH_OPTIONAL=ON.
#include "python_with_torch.h"

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <string>

namespace nanscope::testing {

class PythonFixtureDir {
public:
    // Runs the fixture script into the folder. Empty when it did; else why not, and `skip` says the
    // reason is a missing Python with torch and the build lets the suite skip for it.
    QString write(bool *skip)
    {
        QString tried;
        const QString python = pythonWithTorch(&tried);
        *skip = python.isEmpty() && NANSCOPE_PYTHON_TORCH_OPTIONAL;
        if (python.isEmpty())
            return QStringLiteral("no python3 with torch (tried %1); install python3-torch").arg(tried.trimmed());
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(python, {QStringLiteral(NANSCOPE_PYTHON_FIXTURES), dir_.path()});
        if (!p.waitForFinished(120000))
            return QStringLiteral("python_fixtures.py did not finish within 2 minutes");
        if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
            return QStringLiteral("python_fixtures.py failed: ") + QString::fromUtf8(p.readAll());
        python_ = python;
        return {};
    }
    const QString &python() const { return python_; }
    QString filePath(const QString &name) const { return dir_.filePath(name); }
    std::string path(const QString &name) const { return filePath(name).toStdString(); }

private:
    QString python_;
    QTemporaryDir dir_;
};

}  // namespace nanscope::testing
