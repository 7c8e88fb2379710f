// nanscope: the GUI by default; `scenarios`, `run` and `bench` run headless (no display needed).
#include "cli.h"
#include "live_session.h"
#include "widgets/nan_map_view.h"
#include "window/gui_bench.h"
#include "widgets/control_panel.h"
#include "widgets/language.h"
#include "window/main_window.h"
#include "window/run_comparison.h"
#include "window/model_opener.h"

#include "nanscope/allocator.h"
#include "nanscope/input_shape.h"
#include "nanscope/job_folder.h"
#include "nanscope/keep_policy.h"
#include "nanscope/run_file.h"
#include "nanscope/scenario.h"
#include "nanscope/version.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QIcon>
#include <QTimer>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>

namespace {

// The window's command line. Its help is answered before QApplication exists, because without a
// display QApplication aborts; so the options are set up in one place for both.
struct GuiOptions {
    QCommandLineOption scenario{QStringLiteral("scenario"), QStringLiteral("demo scenario to select"),
                                QStringLiteral("ID"), QStringLiteral("large-lr-mse")};
    QCommandLineOption autostart{QStringLiteral("autostart"), QStringLiteral("start the run at once")};
    QCommandLineOption steps{QStringLiteral("steps"), QStringLiteral("steps to run"), QStringLiteral("N")};
    QCommandLineOption keep{QStringLiteral("keep"),
                            QStringLiteral("what the run files the window records keep of each layer's health: all, "
                                           "auto (the default) or a budget such as 2GiB, as `nanscope run --keep`"),
                            QStringLiteral("POLICY"), QStringLiteral("auto")};
    QCommandLineOption screenshot{QStringLiteral("screenshot"),
                                  QStringLiteral("after the run, save the window to FILE.png and exit"),
                                  QStringLiteral("FILE")};
    QCommandLineOption model{QStringLiteral("model"),
                             QStringLiteral("a TorchScript model to open instead of a scenario"),
                             QStringLiteral("FILE.pt")};
    QCommandLineOption inputShape{
        QStringLiteral("input-shape"),
        QStringLiteral("the model's synthetic input shape, batch first (without it, a dialog asks)"),
        QStringLiteral("8x3x64x64")};
    QCommandLineOption loss{QStringLiteral("loss"), QStringLiteral("the model's loss: cross-entropy or mse"),
                            QStringLiteral("LOSS"), QStringLiteral("cross-entropy")};
    QCommandLineOption map{QStringLiteral("map"),
                           QStringLiteral("what the map shows: %1 (difference with --compare)")
                               .arg(QString::fromStdString(nanscope::mapMeasureIdList())),
                           QStringLiteral("MEASURE"), QStringLiteral("nonfinite")};
    QCommandLineOption compare{QStringLiteral("compare"),
                               QStringLiteral("a second run drawn beside this one (File > Compare with...); with "
                                              "--screenshot, once the run has ended"),
                               QStringLiteral("FILE.nsrun")};
    QCommandLineOption language{QStringLiteral("language"),
                                QStringLiteral("the window's language: en or zh_CN (default: the one chosen in View › "
                                               "Language, else the system's)"),
                                QStringLiteral("LANG")};
    QCommandLineOption fix{QStringLiteral("fix"),
                           QStringLiteral("start with the scenario's own fix on (the Lesson's fix control)")};
    QCommandLineOption dock{QStringLiteral("dock"),
                            QStringLiteral("the panel to bring to the front on the right: origin, lesson, ranks or "
                                           "comparison"),
                            QStringLiteral("NAME")};
    // Answered before QApplication, as help is, with the LibTorch and Qt versions (versionLine).
    QCommandLineOption version{QStringLiteral("version"),
                               QStringLiteral("the version, and the LibTorch and Qt it was built with")};

    void setUp(QCommandLineParser &parser) const
    {
        parser.setApplicationDescription(
            QStringLiteral("Find where, when and why NaN and Inf appear in training.\nHeadless: nanscope %1 | "
                           "gui-bench (each with --help)")
                .arg(QString::fromStdString(nanscope::cli::subcommandList())));
        parser.addHelpOption();
        parser.addOptions(
            {scenario, autostart, steps, keep, screenshot, model, inputShape, loss, map, compare, language, fix, dock,
             version});
        parser.addPositionalArgument(QStringLiteral("[FILE.pt|FILE.nsrun|FOLDER]"),
                                     QStringLiteral("a model (the same as --model FILE.pt), a recorded run to open "
                                                    "(also: nanscope open FILE.nsrun), or a job's run folder"));
    }
};

bool asksFor(const char *option, int argc, char **argv)
{
    for (int i = 1; i < argc; ++i)
        if (!std::strcmp(argv[i], option))
            return true;
    return false;
}

bool asksForHelp(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i)
        if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help-all") ||
            !std::strcmp(argv[i], "-?"))
            return true;
    return false;
}

int printGuiHelp(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("nanscope"));
    QCommandLineParser parser;
    GuiOptions().setUp(parser);
    parser.process(app);  // prints the help and exits
    return 0;
}

// Qt's xcb plugin aborts with a page about plugins when there is no X server: say what to do.
bool displayAvailable()
{
#ifdef Q_OS_LINUX
    return !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") || !qEnvironmentVariableIsEmpty("DISPLAY") ||
           !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY");
#else
    return true;
#endif
}

int runGui(int argc, char **argv)
{
    if (!displayAvailable()) {
        std::fprintf(stderr,
                     "nanscope: no display to open the window on (DISPLAY is not set). Headless: nanscope %s (each "
                     "with --help); or QT_QPA_PLATFORM=offscreen\n",
                     nanscope::cli::subcommandList().c_str());
        return 2;
    }
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("NaNScope"));
    QApplication::setOrganizationName(QStringLiteral("NaNScope"));
    QApplication::setApplicationVersion(QString::fromLatin1(nanscope::nanscopeVersion()));
    // The installed desktop entry (packaging/nanscope.desktop) and its hicolor icon.
    QGuiApplication::setDesktopFileName(QStringLiteral("nanscope"));
    QIcon icon = QIcon::fromTheme(QStringLiteral("nanscope"));
    if (icon.isNull())  // run from the build folder: the same icon from the resources
        for (const int size : {32, 64, 256})
            icon.addFile(QStringLiteral(":/icons/nanscope-%1.png").arg(size));
    QApplication::setWindowIcon(icon);
    QCommandLineParser parser;
    const GuiOptions options;
    options.setUp(parser);
    parser.process(app);

    const auto fail = [](const QString &message) {
        std::fprintf(stderr, "nanscope: %s\n", qPrintable(message));
        return 2;
    };
    if (!nanscope::findScenario(parser.value(options.scenario).toStdString()))
        return fail(
            QStringLiteral("unknown scenario '%1' (see `nanscope scenarios`)").arg(parser.value(options.scenario)));
    const QString positional = parser.positionalArguments().value(0);
    // A run file, or a data-parallel job's run folder (rank-R.nsrun files).
    const bool runFile = positional.endsWith(QString::fromLatin1(nanscope::kRunFileExtension), Qt::CaseInsensitive) ||
                         (!positional.isEmpty() && QFileInfo(positional).isDir());
    const QString modelFile = parser.isSet(options.model) ? parser.value(options.model)
                              : runFile                   ? QString()
                                                          : positional;
    std::optional<std::vector<std::int64_t>> shape;
    if (parser.isSet(options.inputShape) &&
        !(shape = nanscope::parseInputShape(parser.value(options.inputShape).toStdString())))
        return fail(QStringLiteral("--input-shape wants positive integers separated by x, the batch first: 8x3x64x64"));
    if (!nanscope::isKnownLoss(parser.value(options.loss).toStdString()))
        return fail(QStringLiteral("--loss is cross-entropy or mse, got '%1'").arg(parser.value(options.loss)));
    const auto measure = nanscope::parseMapMeasure(parser.value(options.map).toStdString());
    if (!measure)
        return fail(QStringLiteral("--map is %1 (difference with --compare), got '%2'")
                        .arg(QString::fromStdString(nanscope::mapMeasureIdList()), parser.value(options.map)));

    const std::optional<nanscope::KeepPolicy> keep = nanscope::parseKeepPolicy(parser.value(options.keep).toStdString());
    if (!keep)
        return fail(QStringLiteral("--keep is all, auto or a size such as 2GiB or 500MiB, got '%1'")
                        .arg(parser.value(options.keep)));

    const QString language = nanscope::startupLanguage(parser.value(options.language));
    if (!nanscope::setLanguage(language, /*keep=*/false))  // kept only when chosen in View › Language
        return fail(QStringLiteral("--language is %1, got '%2'")
                        .arg(nanscope::availableLanguages().join(QStringLiteral(" or ")), language));

    const QString compared = parser.value(options.compare);
    try {  // a file that cannot be read: one line and exit 1, as the command line does
        if (runFile && QFileInfo(positional).isDir())
            nanscope::jobRunFiles(positional.toStdString());
        else if (runFile)
            nanscope::RunFile check(positional.toStdString());
        if (!compared.isEmpty())
            nanscope::RunFile check(compared.toStdString());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "nanscope: %s\n", e.what());
        return 1;
    }
    nanscope::MainWindow window(nanscope::newLiveSession);
    window.setRecordingKeep(*keep);
    window.selectScenario(parser.value(options.scenario));
    window.nanMap()->setMeasure(*measure);
    if (!modelFile.isEmpty() && shape) {
        const nanscope::ModelFileCheck check = nanscope::checkModelFile(modelFile);
        if (!check.error.isEmpty())
            return fail(check.error);
        nanscope::ModelInputChoice input;
        input.shape = *shape;
        input.loss = parser.value(options.loss);
        window.controlPanel()->setModel(modelFile, input);
    } else if (!modelFile.isEmpty()) {
        QTimer::singleShot(0, &window, [&window, modelFile] { window.openModel(modelFile); });
    }
    if (parser.isSet(options.steps))
        window.setSteps(parser.value(options.steps).toInt());
    if (parser.isSet(options.fix) && !window.controlPanel()->switchScenarioFix(true))
        return fail(QStringLiteral("--fix: scenario '%1' has no fix of its own").arg(window.controlPanel()->scenario()));
    if (parser.isSet(options.dock) && !window.raiseDock(parser.value(options.dock)))
        return fail(QStringLiteral("--dock is origin, lesson, ranks or comparison, got '%1'").arg(parser.value(options.dock)));
    window.show();
    if (parser.isSet(options.screenshot)) {
        const QString file = parser.value(options.screenshot);
        const auto grab = [&window, file] {
            // One more turn of the event loop so the last records are painted.
            QTimer::singleShot(200, &window, [&window, file] {
                const bool ok = window.grab().save(file);
                if (!ok)
                    std::fprintf(stderr, "nanscope: cannot write %s\n", qPrintable(file));
                QApplication::exit(ok ? 0 : 1);
            });
        };
        if (compared.isEmpty()) {
            QObject::connect(&window, &nanscope::MainWindow::runEnded, &app, grab);
        } else {  // the whole run compared, then the picture
            QObject::connect(&window, &nanscope::MainWindow::runEnded, &app,
                             [&window, compared] { window.compareWith(compared); }, Qt::SingleShotConnection);
            QObject::connect(window.comparison(), &nanscope::RunComparison::shownChanged, &app, grab,
                             Qt::SingleShotConnection);
            QObject::connect(window.comparison(), &nanscope::RunComparison::failed, &app,
                             [] { QApplication::exit(1); });
        }
    } else if (!compared.isEmpty()) {
        QTimer::singleShot(0, &window, [&window, compared] { window.compareWith(compared); });
    }
    if (runFile) {
        // A screenshot shows the file as it is; the window follows a run still being written.
        const bool follow = !parser.isSet(options.screenshot);
        QTimer::singleShot(0, &window, [&window, positional, follow] {
            if (!window.openRun(positional, follow))
                QApplication::exit(1);
        });
    } else if (parser.isSet(options.autostart) || parser.isSet(options.screenshot))
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
    return nanscope::runGuiBench(args, nanscope::newLiveSession);
}

}  // namespace

int main(int argc, char **argv)
{
    nanscope::keepFreedTensorMemory();
    if (argc > 1 && std::string(argv[1]) == "gui-bench")
        return runGuiBenchmark(argc, argv);
    std::vector<char *> args(argv, argv + argc);
    if (argc > 2 && std::string(argv[1]) == "open") {  // `nanscope open FILE.nsrun`: the window on it
        args.erase(args.begin() + 1);
        argc = int(args.size());
        argv = args.data();
    }
    if (argc > 1 && nanscope::cli::isSubcommand(argv[1])) {
        std::vector<std::string> args(argv + 1, argv + argc);
        return nanscope::cli::runSubcommand(args, std::cout, std::cerr);
    }
    if (asksForHelp(argc, argv))
        return printGuiHelp(argc, argv);
    if (asksFor("--version", argc, argv)) {
        std::cout << nanscope::cli::versionLine(std::string("Qt ") + qVersion());
        return 0;
    }
    return runGui(argc, argv);
}
