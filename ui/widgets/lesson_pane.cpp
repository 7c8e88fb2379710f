#include "widgets/lesson_pane.h"

#include "widgets/language.h"

#include <QFile>

// The lessons are compiled into the static UI library; a static library's resources must be
// registered by name, from the global namespace.
static void registerLessonResources() { Q_INIT_RESOURCE(resources); }

namespace nanscope {

LessonPane::LessonPane(QWidget *parent) : QTextBrowser(parent)
{
    registerLessonResources();
    setOpenExternalLinks(false);
    document()->setDocumentMargin(10);
}

bool LessonPane::showLesson(const QString &scenario)
{
    scenario_ = scenario;
    // The lesson in the window's language (resources/lessons/LANG/ID.md) where it is written.
    QFile file(QStringLiteral(":/lessons/%1/%2.md").arg(currentLanguage(), scenario));
    if (!file.exists())
        file.setFileName(QStringLiteral(":/lessons/%1.md").arg(scenario));
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        setPlainText(tr("There is no lesson for '%1'.").arg(scenario));
        return false;
    }
    setMarkdown(QString::fromUtf8(file.readAll()));
    return true;
}

void LessonPane::showPage(const QString &markdown)
{
    scenario_.clear();
    setMarkdown(markdown);
}

}  // namespace nanscope
