// `nanscope gui-bench --open FILE.nsrun`: how long the window takes to open a run file and draw
// it, from its coarse chunks (as it opens a very long run), from its chunks (as it opens a long
// run) and step by step, side by side in one process.
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
double openAndDraw(const QString &path, int chunkedAbove, int coarseAbove, long long *shown)
{
    MainWindow window;
    window.show();
    QCoreApplication::processEvents();
    window.setOpenChunkedAbove(chunkedAbove);
    window.setOpenCoarseAbove(coarseAbove);
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

void printMode(const char *what, const std::vector<double> &ms, long long shown)
{
    if (ms.empty())
        return;
    std::printf("open and draw %-14s %8.1f ms (min %.1f, max %.1f), %lld steps shown\n", what, median(ms),
                *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()), shown);
}

}  // namespace

int runOpenBench(const QString &path, int rounds, bool stepByStep)
{
    RunFileStats stats;
    try {
        stats = RunFile(path.toStdString()).stats();
    } catch (const RunFileError &e) {
        std::fprintf(stderr, "nanscope gui-bench: %s\n", e.what());
        return 1;
    }
    std::vector<double> coarse, chunked, stepwise;
    long long shownCoarse = 0, shownChunked = 0, shownStepwise = 0;
    for (int i = 0; i < rounds; ++i) {  // interleaved, so a busy machine slows them alike
        coarse.push_back(openAndDraw(path, 0, 0, &shownCoarse));
        chunked.push_back(openAndDraw(path, 0, -1, &shownChunked));
        if (stepByStep)
            stepwise.push_back(openAndDraw(path, -1, -1, &shownStepwise));
    }
    std::printf("gui-bench --open: %s, %lld steps x %d layers, %d rounds (median of each)\n", qPrintable(path),
                static_cast<long long>(stats.steps), stats.layers, rounds);
    printMode("coarse chunks:", coarse, shownCoarse);
    printMode("chunks:", chunked, shownChunked);
    printMode("step by step:", stepwise, shownStepwise);
    std::printf("coarse chunks / chunks: %.3fx\n", median(chunked) > 0 ? median(coarse) / median(chunked) : 0.0);
    if (stepByStep)
        std::printf("chunks / step by step: %.3fx\n", median(stepwise) > 0 ? median(chunked) / median(stepwise) : 0.0);
    return 0;
}

}  // namespace nanscope
