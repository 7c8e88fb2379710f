#include "widgets/language.h"

#include <QCoreApplication>
#include <QDirIterator>
#include <QLibraryInfo>
#include <QLocale>
#include <QSettings>
#include <QTranslator>

#include <algorithm>
#include <memory>

namespace nanscope {

namespace {

const QString kLanguageKey = QStringLiteral("language");
const QString kEnglish = QStringLiteral("en");

// The application's translator and Qt's own (standard dialogs' buttons), while one is installed.
struct Installed {
    QString code = kEnglish;
    std::unique_ptr<QTranslator> app;
    std::unique_ptr<QTranslator> qt;
};

Installed &installed()
{
    static Installed state;
    return state;
}

// "zh_CN" for zh_CN, zh_TW-less systems reading zh, zh_Hans...: the nearest compiled translation.
QString translatedLanguageFor(const QLocale &locale)
{
    const QStringList available = availableLanguages();
    if (available.contains(locale.name()))
        return locale.name();
    const QString language = locale.name().section(QLatin1Char('_'), 0, 0);
    for (const QString &code : available)
        if (code != kEnglish && code.section(QLatin1Char('_'), 0, 0) == language)
            return code;
    return kEnglish;
}

}  // namespace

QStringList availableLanguages()
{
    QStringList codes{kEnglish};
    QDirIterator it(QStringLiteral(":/i18n"), {QStringLiteral("nanscope_*.qm")});
    while (it.hasNext()) {
        const QString name = it.next().section(QLatin1Char('/'), -1);
        codes << name.mid(int(qstrlen("nanscope_")), name.size() - int(qstrlen("nanscope_.qm")));
    }
    std::sort(codes.begin() + 1, codes.end());
    return codes;
}

QString languageNativeName(const QString &code)
{
    if (code == kEnglish)
        return QStringLiteral("English");
    const QLocale locale(code);
    // "中文" for every Chinese script: the menu names the language, the translation says which.
    return locale.language() == QLocale::Chinese ? QStringLiteral("中文") : locale.nativeLanguageName();
}

QString startupLanguage(const QString &chosen)
{
    if (!chosen.isEmpty())
        return chosen;
    const QString kept = QSettings().value(kLanguageKey).toString();
    if (availableLanguages().contains(kept))
        return kept;
    return translatedLanguageFor(QLocale::system());
}

bool setLanguage(const QString &code, bool keep)
{
    if (!availableLanguages().contains(code))
        return false;
    Installed &now = installed();
    for (auto *t : {now.app.get(), now.qt.get()})
        if (t)
            QCoreApplication::removeTranslator(t);
    now.app.reset();
    now.qt.reset();
    if (code != kEnglish) {
        now.app = std::make_unique<QTranslator>();
        if (!now.app->load(QStringLiteral(":/i18n/nanscope_%1.qm").arg(code)))
            return false;
        // Qt's own strings (dialog buttons) where the system has them (Debian: qt6-translations-l10n).
        auto qt = std::make_unique<QTranslator>();
        if (qt->load(QLocale(code), QStringLiteral("qtbase"), QStringLiteral("_"),
                     QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
            now.qt = std::move(qt);
            QCoreApplication::installTranslator(now.qt.get());
        }
        QCoreApplication::installTranslator(now.app.get());
    }
    now.code = code;
    if (keep)
        QSettings().setValue(kLanguageKey, code);
    return true;
}

QString currentLanguage() { return installed().code; }

}  // namespace nanscope
