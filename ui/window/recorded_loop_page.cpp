#include "window/recorded_loop_page.h"

#include "nanscope/run_file.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QStringList>

namespace nanscope {

namespace {

// The page's sentences, under a translation context of their own.
struct RecordedLoopPage {
    Q_DECLARE_TR_FUNCTIONS(nanscope::RecordedLoopPage)

public:
    static QString of(const RunFileInfo &info, const QString &path);
};

// "lr 0.5, momentum 0.9": an optimizer's settings as the recorder wrote them.
QString settingsLine(const QJsonObject &settings)
{
    QStringList parts;
    for (auto it = settings.begin(); it != settings.end(); ++it) {
        const QJsonValue v = it.value();
        // A string as it is; any other value as JSON writes it (0.5, true, null, [0.9,0.999]).
        const QString value = v.isString() ? v.toString()
                                           : QString::fromUtf8(QJsonDocument(QJsonArray{v}).toJson(QJsonDocument::Compact))
                                                 .mid(1)
                                                 .chopped(1);
        parts << it.key() + QLatin1Char(' ') + value;
    }
    return parts.join(QStringLiteral(", "));
}

}  // namespace

QString recordedLoopPage(const RunFileInfo &info, const QString &path) { return RecordedLoopPage::of(info, path); }

QString RecordedLoopPage::of(const RunFileInfo &info, const QString &path)
{
    const QJsonObject config = QJsonDocument::fromJson(QByteArray::fromStdString(info.configText)).object();
    const QJsonObject r = config.value(QLatin1String("recorder")).toObject();
    const auto text = [&r](const char *key) { return r.value(QLatin1String(key)).toString(); };
    QString page = tr("# A recorded Python loop\n\n`%1`, recorded by nanscope.record %2 with torch %3 and Python %4 "
                      "on %5, %6.\n\n")
                       .arg(text("script").isEmpty() ? text("name") : text("script"), text("nanscope_python"),
                            text("torch"), text("python"), text("host"), QString::fromStdString(info.created));
    if (r.contains(QLatin1String("model_class"))) {
        const qint64 parameters = qint64(r.value(QLatin1String("parameters")).toDouble());
        page += tr("- Model: `%1`, %2 parameters (%3), %4 modules\n")
                    .arg(text("model_class"), QLocale().toString(parameters), text("dtype"),
                         QString::number(r.value(QLatin1String("modules")).toInt()));
    }
    const QString optimizer = text("optimizer_class");
    page += optimizer.isEmpty()
                ? tr("- Optimizer: not given to the recorder\n")
                : tr("- Optimizer: %1 (%2)\n")
                      .arg(optimizer, settingsLine(r.value(QLatin1String("optimizer_settings")).toObject()));
    if (!text("scaler").isEmpty())
        page += tr("- Loss scaler: %1\n").arg(text("scaler"));
    const QString policy = text("on_nonfinite").isEmpty() ? QStringLiteral("record") : text("on_nonfinite");
    page += tr("- A non-finite update: %1 (`on_nonfinite`)\n").arg(policy);
    if (r.value(QLatin1String("steerable")).toBool())
        page += tr("- While it runs: `nanscope steer %1` changes its learning rate, clipping or guard\n")
                    .arg(QFileInfo(path).fileName());
    for (const QJsonValue &v : r.value(QLatin1String("not_measured")).toArray())
        page += tr("- Not measured: %1\n").arg(v.toObject().value(QLatin1String("why")).toString());
    return page;
}

}  // namespace nanscope
