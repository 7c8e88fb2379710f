#pragma once
// Test helper for window suites: wait for the run a window begins (started, or a file opened).
#include "window/main_window.h"

#include <QSignalSpy>

#include <functional>

namespace nanscope::testing {

// Calls `begin` and waits for the run it begins to end.
inline bool runToEnd(MainWindow &w, const std::function<void()> &begin, int timeoutMs = 120000)
{
    QSignalSpy ended(&w, &MainWindow::runEnded);
    begin();
    return ended.wait(timeoutMs);
}

}  // namespace nanscope::testing
