#pragma once
// Runs a `nanscope` sub-command in-process and parses its JSON lines back, for the CLI suites.
#include "cli.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <sstream>
#include <string>
#include <vector>

namespace nanscope::testing {

struct Output {
    int code = 0;
    QString out, err;
    QList<QJsonObject> objects;
};

inline Output run(const QStringList &args)
{
    std::vector<std::string> a;
    for (const QString &s : args)
        a.push_back(s.toStdString());
    std::ostringstream out, err;
    Output o;
    o.code = cli::runSubcommand(a, out, err);
    o.out = QString::fromStdString(out.str());
    o.err = QString::fromStdString(err.str());
    for (const QString &line : o.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const QJsonDocument d = QJsonDocument::fromJson(line.toUtf8());
        if (d.isObject())
            o.objects.push_back(d.object());
    }
    return o;
}

}  // namespace nanscope::testing
