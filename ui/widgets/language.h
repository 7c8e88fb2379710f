#pragma once
// The window's language: English (the source text) or a translation compiled into the resources
// (translations/nanscope_LANG.ts -> :/i18n/nanscope_LANG.qm). Installing one sends every widget a
// QEvent::LanguageChange, which each answers by setting its texts again: no restart.
#include <QString>
#include <QStringList>

namespace nanscope {

// "en" and every translation compiled in ("zh_CN"), English first.
QStringList availableLanguages();
// The language's own name for a menu: "English", "中文".
QString languageNativeName(const QString &code);
// The language a window starts in: `chosen` (--language) if given, else the one kept from the last
// session, else the system locale's when it is translated, else English.
QString startupLanguage(const QString &chosen = {});
// Installs `code`'s translation (none for "en"); `keep` keeps the choice for the next session
// (a menu choice does, --language does not). False, with nothing changed, for a language that is
// not available.
bool setLanguage(const QString &code, bool keep = true);
QString currentLanguage();

}  // namespace nanscope
