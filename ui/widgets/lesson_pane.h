#pragma once
// The scenario's lesson (cause, fix, what to try) from resources/lessons, rendered from Markdown.
// Presentation mode enlarges it for a classroom.
#include <QTextBrowser>

namespace nanscope {

class LessonPane final : public QTextBrowser {
    Q_OBJECT
public:
    explicit LessonPane(QWidget *parent = nullptr);
    // Shows the lesson of `scenario` in the current language (English where it has no
    // translation); false (and a note in the pane) when there is none.
    bool showLesson(const QString &scenario);
    // A page of its own (a user's model has no lesson): Markdown.
    void showPage(const QString &markdown);
    QString scenario() const { return scenario_; }

private:
    QString scenario_;
};

}  // namespace nanscope
