#pragma once
// `nanscope gui-bench`: feeds the real window synthetic step records at a paced rate and
// measures what a user feels: the event loop's latency (p50, p99, max) while records stream, the
// repaint rate, and the process's memory over a very long run. With --open, the time to open and
// draw a run file instead. Numbers are printed, not asserted.
#include "window/session_controller.h"

#include <QString>
#include <QStringList>

namespace nanscope {

// Needs a QApplication. Returns the process exit code; prints to stdout, errors to stderr.
// `live`: what the window trains when it is not showing the bench's run (MainWindow's).
int runGuiBench(const QStringList &args, const RunSourceFactory &live);
// `gui-bench --open FILE.nsrun [--rounds N] [--no-steps] [--zoom]` (gui_bench_open.cpp).
int runOpenBench(const QString &path, const RunSourceFactory &live, int rounds, bool stepByStep = true,
                 bool zoom = false);

}  // namespace nanscope
