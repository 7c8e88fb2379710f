// nanscope: the GUI by default; `scenarios`, `run` and `bench` run headless (no display needed).
#include "cli.h"
#include "gui_bench.h"
#include "main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include <cstdio>
#include <iostream>

namespace {

int runGui(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("NaNScope"));
    QApplication::setOrganizationName(QStringLiteral("NaNScope"));
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Find where, when and why NaN and Inf appear in training.\n"
        "Headless: nanscope scenarios | run --scenario ID [...] | bench [--json] | gui-bench"));
    parser.addHelpOption();
    QCommandLineOption scenario(QStringLiteral("scenario"), QStringLiteral("demo scenario to select"), QStringLiteral("ID"),
                                QStringLiteral("large-lr-mse"));
    QCommandLineOption autostart(QStringLiteral("autostart"), QStringLiteral("start the run at once"));
    QCommandLineOption steps(QStringLiteral("steps"), QStringLiteral("steps to run"), QStringLiteral("N"));
    QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                  QStringLiteral("after the run, save the window to FILE.png and exit"), QStringLiteral("FILE"));
    parser.addOptions({scenario, autostart, steps, screenshot});
    parser.process(app);

    nanscope::MainWindow window;
    window.selectScenario(parser.value(scenario));
    if (parser.isSet(steps))
        window.setSteps(parser.value(steps).toInt());
    window.show();
    if (parser.isSet(screenshot)) {
        const QString file = parser.value(screenshot);
        QObject::connect(&window, &nanscope::MainWindow::runEnded, &app, [&window, file] {
            // One more turn of the event loop so the last records are painted.
            QTimer::singleShot(200, &window, [&window, file] {
                const bool ok = window.grab().save(file);
                if (!ok)
                    std::fprintf(stderr, "nanscope: cannot write %s\n", qPrintable(file));
                QApplication::exit(ok ? 0 : 1);
            });
        });
    }
    if (parser.isSet(autostart) || parser.isSet(screenshot))
        QTimer::singleShot(0, &window, [&window] {
            if (!window.startRun())
                QApplication::exit(1);
        });
    return app.exec();
}

int runGuiBenchmark(int argc, char **argv)
{
    // The benchmark measures the window, not a display server: offscreen unless told otherwise.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QStringList args = QCoreApplication::arguments();
    args.removeAt(1);  // "gui-bench"
    return nanscope::runGuiBench(args);
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc > 1 && std::string(argv[1]) == "gui-bench")
        return runGuiBenchmark(argc, argv);
    if (argc > 1 && nanscope::cli::isSubcommand(argv[1])) {
        std::vector<std::string> args(argv + 1, argv + argc);
        return nanscope::cli::runSubcommand(args, std::cout, std::cerr);
    }
    return runGui(argc, argv);
}
