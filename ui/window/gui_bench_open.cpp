// `nanscope gui-bench --open FILE.nsrun`: how long the window takes to open a run file and draw
// it, from its chunks (as it opens a long run) and step by step, side by side in one process.
#include "window/gui_bench.h"

#include "window/main_window.h"

#include "nanscope/run_file.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace nanscope {

namespace {

// Opens `path` in a new window and waits until every step is shown and drawn; milliseconds.
double openAndDraw(const QString &path, int chunkedAbove, long long *shown)
{
    MainWindow window;
    window.show();
    QCoreApplication::processEvents();
    window.setOpenChunkedAbove(chunkedAbove);
    bool ended = false;
    QObject::connect(&window, &MainWindow::runEnded, &window, [&ended] { ended = true; });
    QElapsedTimer clock;
    clock.start();
    if (!window.openRun(path, false))
        return -1;
    while (!ended)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    window.grab();  // the plots and the map drawn with what they hold
    const double ms = double(clock.nsecsElapsed()) / 1e6;
    *shown = window.recordsShown();
    return ms;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int runOpenBench(const QString &path, int rounds)
{
    RunFileStats stats;
    try {
        stats = RunFile(path.toStdString()).stats();
    } catch (const RunFileError &e) {
        std::fprintf(stderr, "nanscope gui-bench: %s\n", e.what());
        return 1;
    }
    std::vector<double> chunked, stepwise;
    long long shownChunked = 0, shownStepwise = 0;
    for (int i = 0; i < rounds; ++i) {  // interleaved, so a busy machine slows both alike
        chunked.push_back(openAndDraw(path, 0, &shownChunked));
        stepwise.push_back(openAndDraw(path, -1, &shownStepwise));
    }
    const double c = median(chunked), s = median(stepwise);
    std::printf("gui-bench --open: %s, %lld steps x %d layers, %d rounds (median of each)\n", qPrintable(path),
                static_cast<long long>(stats.steps), stats.layers, rounds);
    std::printf("open and draw from chunks:    %8.1f ms (min %.1f, max %.1f), %lld steps shown\n", c,
                *std::min_element(chunked.begin(), chunked.end()), *std::max_element(chunked.begin(), chunked.end()),
                shownChunked);
    std::printf("open and draw step by step:   %8.1f ms (min %.1f, max %.1f), %lld steps shown\n", s,
                *std::min_element(stepwise.begin(), stepwise.end()),
                *std::max_element(stepwise.begin(), stepwise.end()), shownStepwise);
    std::printf("chunks / step by step: %.3fx\n", s > 0 ? c / s : 0.0);
    return 0;
}

}  // namespace nanscope
