#include "window/gui_bench.h"

#include "window/main_window.h"

#include "nanscope/pushed_run_source.h"
#include "nanscope/synthetic_records.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>
#include <unistd.h>

namespace nanscope {

namespace {

using Clock = std::chrono::steady_clock;

double residentMiB()
{
    QFile statm(QStringLiteral("/proc/self/statm"));
    if (!statm.open(QIODevice::ReadOnly))
        return 0;
    const QList<QByteArray> fields = statm.readAll().split(' ');
    return fields.size() > 1 ? fields[1].toDouble() * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0) : 0;
}

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, std::size_t(p * double(v.size() - 1) + 0.5))];
}

}  // namespace

int runGuiBench(const QStringList &args, const RunSourceFactory &live)
{
    QCommandLineParser parser;
    QCommandLineOption rate(QStringLiteral("rate"), QStringLiteral("paced steps/s for the latency phase"),
                            QStringLiteral("N"), QStringLiteral("5000"));
    QCommandLineOption seconds(QStringLiteral("seconds"), QStringLiteral("length of the latency phase"),
                               QStringLiteral("S"), QStringLiteral("10"));
    QCommandLineOption steps(QStringLiteral("steps"), QStringLiteral("total steps, for the memory phase"),
                             QStringLiteral("N"), QStringLiteral("1000000"));
    QCommandLineOption fastRate(QStringLiteral("fast-rate"), QStringLiteral("paced steps/s after the latency phase"),
                                QStringLiteral("N"), QStringLiteral("50000"));
    QCommandLineOption layers(QStringLiteral("layers"), QStringLiteral("layers a record carries"), QStringLiteral("N"),
                              QStringLiteral("13"));
    QCommandLineOption open(QStringLiteral("open"),
                            QStringLiteral("time opening and drawing this run file, from coarse chunks, from chunks "
                                           "and step by step"),
                            QStringLiteral("FILE.nsrun"));
    QCommandLineOption noSteps(QStringLiteral("no-steps"),
                               QStringLiteral("with --open: not step by step (a file too long for it)"));
    QCommandLineOption zoom(QStringLiteral("zoom"),
                            QStringLiteral("with --open: time zooms into stretches read back at each level instead"));
    QCommandLineOption rounds(QStringLiteral("rounds"), QStringLiteral("rounds of --open"), QStringLiteral("N"),
                              QStringLiteral("3"));
    parser.addOptions({rate, seconds, steps, fastRate, layers, open, rounds, noSteps, zoom});
    parser.setApplicationDescription(QStringLiteral("nanscope gui-bench: feeds the window (offscreen) synthetic "
                                                    "records and measures its event loop's latency and memory"));
    const QCommandLineOption help = parser.addHelpOption();
    if (!parser.parse(args)) {
        std::fprintf(stderr, "nanscope gui-bench: %s\n", qPrintable(parser.errorText()));
        return 2;
    }
    if (parser.isSet(help)) {
        std::fputs(qPrintable(parser.helpText()), stdout);
        return 0;
    }
    if (parser.isSet(open)) {
        const int n = parser.value(rounds).toInt();
        if (n <= 0) {
            std::fprintf(stderr, "nanscope gui-bench: --rounds must be positive\n");
            return 2;
        }
        return runOpenBench(parser.value(open), live, n, !parser.isSet(noSteps), parser.isSet(zoom));
    }
    const int slowRate = parser.value(rate).toInt(), fast = parser.value(fastRate).toInt();
    const int total = parser.value(steps).toInt(), layerCount = parser.value(layers).toInt();
    const double slowSeconds = parser.value(seconds).toDouble();
    if (slowRate <= 0 || fast <= 0 || total <= 0 || layerCount < 2 || slowSeconds <= 0) {
        std::fprintf(
            stderr,
            "nanscope gui-bench: --rate, --fast-rate, --steps and --seconds must be positive, --layers at least 2\n");
        return 2;
    }

    // The window watches a pushed source, exactly as it watches a live session.
    auto source = std::make_unique<PushedRunSource>();
    PushedRunSource &feed = *source;
    MainWindow window(live, std::move(source));
    window.show();
    const int run = 1000;
    feed.beginRun(run, syntheticLayers(layerCount));

    std::atomic<bool> producing{true};
    std::atomic<int> produced{0};
    std::atomic<bool> slowPhase{true};
    const int slowSteps = int(std::min<double>(total, slowRate * slowSeconds));
    std::thread producer([&] {
        const auto start = Clock::now();
        for (int step = 0; step < total && producing; ++step) {
            const double at =
                step < slowSteps ? step / double(slowRate) : slowSeconds + (step - slowSteps) / double(fast);
            std::this_thread::sleep_until(start + std::chrono::duration<double>(at));
            // A stretch in the middle of each 10,000 steps goes non-finite, so the map and tree have work.
            feed.pushStep(syntheticStepRecord(run, step, layerCount, step % 10000 >= 5000 && step % 10000 < 5100));
            produced = step + 1;
            if (step + 1 == slowSteps)
                slowPhase = false;
        }
        producing = false;
    });

    // A probe thread posts a timestamped call every 5 ms; its delay is the event loop's latency.
    std::vector<double> latencies;
    std::atomic<bool> probing{true};
    std::thread probe([&] {
        while (probing) {
            const auto posted = Clock::now();
            QMetaObject::invokeMethod(
                &window,
                [&latencies, &slowPhase, posted] {
                    if (slowPhase)
                        latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - posted).count());
                },
                Qt::QueuedConnection);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    });

    const int deliveriesBefore = window.controller().deliveries();
    const auto t0 = Clock::now();
    double slowWall = 0;
    int slowDeliveries = 0;
    struct Checkpoint {
        int steps;
        double mib;
        int backlog;  // records produced but not yet shown: the GUI falling behind
    };
    std::vector<Checkpoint> memory;
    const int checkpoints[] = {total / 10, total / 4, total / 2, 3 * total / 4, total};
    std::size_t next = 0;
    int largestBacklog = 0;
    while (window.recordsShown() < total || producing) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        largestBacklog = std::max(largestBacklog, int(produced - window.recordsShown()));
        if (!slowPhase && slowWall == 0 && window.recordsShown() >= slowSteps) {
            slowWall = std::chrono::duration<double>(Clock::now() - t0).count();
            slowDeliveries = window.controller().deliveries() - deliveriesBefore;
        }
        while (next < std::size(checkpoints) && window.recordsShown() >= checkpoints[next]) {
            memory.push_back({checkpoints[next], residentMiB(), produced - window.recordsShown()});
            ++next;
        }
        if (!producing && window.recordsShown() >= produced)
            break;
    }
    probing = false;
    probe.join();
    producer.join();
    QCoreApplication::processEvents();

    std::printf("gui-bench: %d layers a record, the real window (%s platform)\n", layerCount,
                qPrintable(QGuiApplication::platformName()));
    std::printf(
        "latency phase: %d steps at %d steps/s in %.2f s: event-loop latency p50 %.2f ms, p99 %.2f ms, max %.2f ms "
        "(%zu probes); %d view updates (%.1f a second)\n",
        slowSteps, slowRate, slowWall, percentile(latencies, 0.5), percentile(latencies, 0.99),
        latencies.empty() ? 0.0 : *std::max_element(latencies.begin(), latencies.end()), latencies.size(),
        slowDeliveries, slowWall > 0 ? slowDeliveries / slowWall : 0.0);
    std::printf("memory phase: %d steps in all (then %d steps/s); resident memory:", int(window.recordsShown()), fast);
    for (const Checkpoint &c : memory)
        std::printf(" %d steps %.1f MiB (backlog %d);", c.steps, c.mib, c.backlog);
    if (memory.size() >= 2)
        std::printf(" growth from %d to %d steps: %+.1f MiB", memory.front().steps, memory.back().steps,
                    memory.back().mib - memory.front().mib);
    std::printf("\nlargest backlog: %d records produced and not yet shown; %zu records folded into chunks as "
                "the window fell behind\n",
                largestBacklog, window.controller().foldedRecords());
    return 0;
}

}  // namespace nanscope
