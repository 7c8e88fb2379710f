#pragma once
// What the Lesson panel says of a run that a Python loop recorded (nanscope.record): the loop has
// no lesson, so the panel describes the run itself from the recorder's part of the file's config.
#include <QString>

namespace nanscope {

struct RunFileInfo;

// Markdown: the script, the model's class and size, the optimizer and its settings, the
// recorder's settings (guard, steering), what was not measured, and when and where it ran.
QString recordedLoopPage(const RunFileInfo &info, const QString &path);

}  // namespace nanscope
