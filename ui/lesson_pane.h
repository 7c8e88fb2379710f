#pragma once
// The scenario's lesson (cause, fix, what to try) from resources/lessons, rendered from Markdown.
// Presentation mode enlarges it for a classroom.
#include <QTextBrowser>

namespace nanscope {

class LessonPane final : public QTextBrowser {
    Q_OBJECT
public:
    explicit LessonPane(QWidget *parent = nullptr);
    // Shows the lesson of `scenario`; false (and a note in the pane) when there is none.
    bool showLesson(const QString &scenario);
    QString scenario() const { return scenario_; }

private:
    QString scenario_;
};

}  // namespace nanscope
