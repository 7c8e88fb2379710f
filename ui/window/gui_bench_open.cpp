// `nanscope gui-bench --open FILE.nsrun`: how long the window takes to open a run file and draw
// it, from its coarse chunks (as it opens a very long run), from its chunks (as it opens a long
// run) and step by step, side by side in one process; with --zoom, how long a zoom into a stretch
// takes to be read back and drawn, at each level.
#include "window/gui_bench.h"

#include "widgets/plot_panel.h"
#include "window/main_window.h"
#include "window/stretch_loader.h"

#include "nanscope/run_file.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace nanscope {

namespace {

// Opens `path` in a new window and waits until every step is shown and drawn; milliseconds.
double openAndDraw(const QString &path, const RunSourceFactory &live, int chunkedAbove, int coarseAbove, long long *shown)
{
    MainWindow window(live);
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

// The process's peak resident memory (VmHWM), MiB.
double peakResidentMiB()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("VmHWM:"))
            return line.mid(6).trimmed().split(' ').value(0).toDouble() / 1024.0;
    return 0;
}

// Zooms into `rounds` stretches of `width` steps spread over the run; milliseconds each, from the
// zoom to the stretch drawn.
std::vector<double> zoomAndDraw(MainWindow &window, const RunFileStats &stats, int width, int rounds)
{
    std::vector<double> ms;
    int loaded = 0;
    bool failed = false;
    const QMetaObject::Connection counting =
        QObject::connect(window.stretchLoader(), &StretchLoader::loaded, &window, [&loaded] { ++loaded; });
    const QMetaObject::Connection failing = QObject::connect(
        window.stretchLoader(), &StretchLoader::failed, &window, [&failed](const QString &message) {
            std::fprintf(stderr, "nanscope gui-bench: %s\n", qPrintable(message));
            failed = true;
        });
    const long long span = std::max(0LL, static_cast<long long>(stats.lastStep - stats.firstStep + 1) - width);
    for (int i = 0; i < rounds; ++i) {
        const int first = stats.firstStep + int(span * (i + 1) / (rounds + 1));
        QElapsedTimer clock;
        clock.start();
        const int before = loaded;
        window.plots()->showSteps(first, first + width - 1);
        while (loaded == before && !failed)
            QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        if (failed)
            break;
        window.grab();
        ms.push_back(double(clock.nsecsElapsed()) / 1e6);
    }
    QObject::disconnect(counting);
    QObject::disconnect(failing);
    return ms;
}

int runZoomBench(const QString &path, const RunSourceFactory &live, const RunFileStats &stats, int rounds)
{
    MainWindow window(live);
    window.show();
    bool ended = false;
    QObject::connect(&window, &MainWindow::runEnded, &window, [&ended] { ended = true; });
    if (!window.openRun(path, false))
        return 1;
    while (!ended)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    const std::size_t layers = std::size_t(stats.layers);
    const int steps = int(std::min<std::size_t>(2048, 4 * stretchMapColumns(layers)));
    const int widths[] = {steps, steps * kChunkSteps, int(std::min<std::int64_t>(stats.steps / 2, 512LL * kCoarseChunkSteps))};
    const char *names[] = {"single steps:", "chunks:", "coarse chunks:"};
    std::printf("gui-bench --open --zoom: %s, %lld steps x %d layers, %d zooms a level (median of each)\n",
                qPrintable(path), static_cast<long long>(stats.steps), stats.layers, rounds);
    for (int level = 0; level < 3; ++level) {
        if (widths[level] > stats.steps / 2)
            continue;  // the run is too short for a stretch of this level
        const std::vector<double> ms = zoomAndDraw(window, stats, widths[level], rounds);
        if (ms.empty())
            continue;
        std::printf("zoom into %8d steps, %-14s %8.1f ms (min %.1f, max %.1f)\n", widths[level], names[level],
                    median(ms), *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()));
    }
    std::printf("peak resident memory: %.0f MiB\n", peakResidentMiB());
    return 0;
}

}  // namespace

int runOpenBench(const QString &path, const RunSourceFactory &live, int rounds, bool stepByStep, bool zoom)
{
    RunFileStats stats;
    try {
        stats = RunFile(path.toStdString()).stats();
    } catch (const RunFileError &e) {
        std::fprintf(stderr, "nanscope gui-bench: %s\n", e.what());
        return 1;
    }
    if (zoom)
        return runZoomBench(path, live, stats, rounds);
    std::vector<double> coarse, chunked, stepwise;
    long long shownCoarse = 0, shownChunked = 0, shownStepwise = 0;
    for (int i = 0; i < rounds; ++i) {  // interleaved, so a busy machine slows them alike
        coarse.push_back(openAndDraw(path, live, 0, 0, &shownCoarse));
        chunked.push_back(openAndDraw(path, live, 0, -1, &shownChunked));
        if (stepByStep)
            stepwise.push_back(openAndDraw(path, live, -1, -1, &shownStepwise));
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
