#include "window/main_window.h"

#include "widgets/comparison_panel.h"
#include "widgets/control_panel.h"
#include "models/event_log_model.h"
#include "models/layer_tree_model.h"
#include "widgets/challenge_box.h"
#include "models/core_text.h"
#include "widgets/lesson_pane.h"
#include "window/model_opener.h"
#include "window/classroom_controller.h"
#include "window/job_controller.h"
#include "window/replay_runner.h"
#include "window/run_files.h"
#include "window/zoom_controller.h"
#include "widgets/nan_map_view.h"
#include "widgets/origin_panel.h"
#include "widgets/plot_panel.h"
#include "widgets/rank_step_view.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

#include <qcustomplot.h>

namespace nanscope {

namespace {

QDockWidget *dock(QMainWindow *window, const QString &title, const QString &name, QWidget *content,
                  Qt::DockWidgetArea area)
{
    auto *d = new QDockWidget(title, window);
    d->setObjectName(name);
    d->setWidget(content);
    window->addDockWidget(area, d);
    return d;
}

}  // namespace

MainWindow::MainWindow(RunSourceFactory live, std::unique_ptr<RunSource> source, QWidget *parent)
    : QMainWindow(parent), controller_(std::move(live), std::move(source))
{
    setWindowTitle(QStringLiteral("NaNScope"));
    setAcceptDrops(true);  // a .pt file dropped anywhere on the window opens it
    normalFont_ = font();
    modelOpener_ = new ModelOpener(this);
    plots_ = new PlotPanel;
    map_ = new NanMapView;
    auto *centre = new QSplitter(Qt::Vertical);
    centre->addWidget(plots_);
    centre->addWidget(map_);
    setCentralWidget(centre);
    buildDocks();
    classroom_ = new ClassroomController(lesson_, challengeBox_, this);
    connect(this, &MainWindow::runEnded, classroom_, [this] {
        classroom_->noteResult(controller_.lastSummary().challenge,
                               controls_->modelSelected() ? QString() : controls_->scenario());
    });
    buildActions();
    jobs_ = new JobController(rankBox_, rankAction_, rankView_, rankDock_,
                              [this](const QString &path, bool follow) { return openRunFile(path, follow); }, this);
    connect(jobs_, &JobController::opened, this, [this](const QString &message) {
        statusBar()->showMessage(message, 5000);
    });
    connect(jobs_, &JobController::choose, this, [this](int layer, int step) {
        selectLayer(layer);
        selectStep(step);
    });
    buildReplay();
    buildComparison();
    files_ = new RunFiles(controller_, this);
    connect(files_, &RunFiles::recordingFailed, this,
            [this](const QString &text) { warn(tr("Recording stopped"), text + tr(" The run goes on unrecorded.")); });
    zoom_ = new ZoomController(plots_, map_, store_, [this] { return files_->path(); }, [this] { files_->flush(); },
                               this);
    connect(zoom_, &ZoomController::failed, this, [this](const QString &message) {
        statusBar()->showMessage(tr("Could not read the steps zoomed into: %1").arg(message), 10000);
    });
    // First-start layout (a saved one replaces it): the map gets room for a row per layer.
    centre->setSizes({380, 520});
    resizeDocks({findChild<QDockWidget *>(QStringLiteral("eventLog"))}, {130}, Qt::Vertical);
    resizeDocks({findChild<QDockWidget *>(QStringLiteral("layers"))}, {380}, Qt::Horizontal);

    stateLabel_ = new QLabel;
    stateLabel_->setObjectName(QStringLiteral("runState"));
    stepLabel_ = new QLabel;
    rateLabel_ = new QLabel;
    deviceLabel_ = new QLabel;
    for (QLabel *l : {stateLabel_, stepLabel_, rateLabel_, deviceLabel_})
        statusBar()->addPermanentWidget(l);

    connect(&controller_, &SessionController::runBegun, this, &MainWindow::onRunBegun);
    connect(&controller_, &SessionController::chunksArrived, this, &MainWindow::onChunks);
    connect(&controller_, &SessionController::recordsArrived, this, &MainWindow::onRecords);
    connect(&controller_, &SessionController::eventsArrived, this, &MainWindow::onEvents);
    connect(&controller_, &SessionController::sessionStateChanged, this, &MainWindow::onState);
    connect(&controller_, &SessionController::runCompleted, this, &MainWindow::onFinished);
    connect(controls_, &ControlPanel::controlsEdited, this, [this](const Controls &c) { controller_.setControls(c); });
    connect(controls_, &ControlPanel::scenarioChanged, this, &MainWindow::showLesson);
    connect(modelOpener_, &ModelOpener::chosen, this,
            [this](const QString &path, const ModelInputChoice &input, const QString &note) {
                modelGuessNote_ = note;
                controls_->setModel(path, input);
                statusBar()->showMessage(tr("Opened %1: press Start to train it").arg(path), 8000);
            });
    connect(modelOpener_, &ModelOpener::failed, this,
            [this](const QString &message) { warn(tr("Cannot open the model"), message); });
    connect(map_, &NanMapView::cellClicked, this, [this](int layer, int step) {
        selectLayer(layer);
        selectStep(step);
    });
    // The map's rows follow the tree: opening or closing a module in either opens or closes it in
    // both, and the current layer is marked in both.
    const auto layerOf = [](const QModelIndex &index) { return index.data(LayerTreeModel::LayerIdRole).toInt(); };
    connect(layerView_, &QTreeView::expanded, map_,
            [this, layerOf](const QModelIndex &index) { map_->setExpanded(layerOf(index), true); });
    connect(layerView_, &QTreeView::collapsed, map_,
            [this, layerOf](const QModelIndex &index) { map_->setExpanded(layerOf(index), false); });
    connect(map_, &NanMapView::rowToggled, this, [this](int layer, bool expanded) {
        const QModelIndex index = layerProxy_->mapFromSource(layerModel_->indexForLayer(layer));
        if (index.isValid())
            layerView_->setExpanded(index, expanded);
        selectLayer(layer);
    });
    connect(
        layerView_->selectionModel(), &QItemSelectionModel::currentChanged, map_,
        [this, layerOf](const QModelIndex &current) { map_->selectLayer(current.isValid() ? layerOf(current) : -1); });
    connect(plots_, &PlotPanel::stepClicked, this, &MainWindow::selectStep);
    const auto decide = [this](PausedStepDecision d) {
        controller_.decidePausedStep(d);
        origin_->decided();
    };
    connect(origin_, &OriginPanel::skipRequested, this, [decide] { decide(PausedStepDecision::SkipBatch); });
    connect(origin_, &OriginPanel::retryRequested, this, [decide] { decide(PausedStepDecision::Retry); });
    connect(origin_, &OriginPanel::continueRequested, this, [decide] { decide(PausedStepDecision::Continue); });
    connect(origin_, &OriginPanel::stopRequested, this, [decide] { decide(PausedStepDecision::Stop); });
    connect(origin_, &OriginPanel::rollbackRequested, this, [this] {
        controller_.requestRollback();
        origin_->decided();
    });

    resize(1400, 900);
    QSettings settings;
    controls_->restoreSettings(settings);
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    rankDock_->hide();  // until a job is opened
    comparisonDock_->hide();  // until a run is compared
    setPresentationMode(settings.value(QStringLiteral("window/presentation"), false).toBool());
    retranslate();  // every text of the window's own, in the current language; shows the lesson
    updateActions();
    updateStatus();
}

MainWindow::~MainWindow()
{
    controller_.stop();
    controller_.wait(5000);
    files_->stopRecording();  // before the recorder dies: the source must not call it any more
}

void MainWindow::buildDocks()
{
    controls_ = new ControlPanel;
    dock(this, QString(), QStringLiteral("controls"), controls_, Qt::LeftDockWidgetArea);

    layerModel_ = new LayerTreeModel(this);
    layerProxy_ = makeLayerFilterProxy(this);
    layerProxy_->setSourceModel(layerModel_);
    auto *layerBox = new QWidget;
    auto *layerLayout = new QVBoxLayout(layerBox);
    layerLayout->setContentsMargins(0, 0, 0, 0);
    layerFilter_ = new QLineEdit;
    layerFilter_->setClearButtonEnabled(true);
    layerView_ = new QTreeView;
    layerView_->setModel(layerProxy_);
    layerView_->setSortingEnabled(true);
    layerView_->sortByColumn(-1, Qt::AscendingOrder);  // model order until the user sorts
    layerView_->setUniformRowHeights(true);
    layerView_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // Fitting the columns measures this many rows, not all of them: with 600 modules, measuring
    // every row took 30 ms of the event loop on the first step.
    layerView_->header()->setResizeContentsPrecision(64);
    layerLayout->addWidget(layerFilter_);
    layerLayout->addWidget(layerView_);
    connect(layerFilter_, &QLineEdit::textChanged, layerProxy_, [this](const QString &text) {
        layerProxy_->setFilterFixedString(text);
        layerView_->expandAll();
        map_->expandAll();
    });
    dock(this, QString(), QStringLiteral("layers"), layerBox, Qt::RightDockWidgetArea);

    origin_ = new OriginPanel;
    dock(this, QString(), QStringLiteral("origin"), origin_, Qt::RightDockWidgetArea);
    lesson_ = new LessonPane;
    challengeBox_ = new ChallengeBox;
    auto *lessonBox = new QWidget;
    auto *lessonLayout = new QVBoxLayout(lessonBox);
    lessonLayout->setContentsMargins(0, 0, 0, 0);
    lessonLayout->addWidget(lesson_, 1);
    lessonLayout->addWidget(challengeBox_);
    QDockWidget *lessonDock = dock(this, QString(), QStringLiteral("lesson"), lessonBox, Qt::RightDockWidgetArea);
    tabifyDockWidget(findChild<QDockWidget *>(QStringLiteral("origin")), lessonDock);

    rankView_ = new RankStepView;
    rankDock_ = dock(this, QString(), QStringLiteral("ranks"), rankView_, Qt::RightDockWidgetArea);
    tabifyDockWidget(findChild<QDockWidget *>(QStringLiteral("origin")), rankDock_);
    comparisonPanel_ = new ComparisonPanel;
    comparisonDock_ = dock(this, QString(), QStringLiteral("comparison"), comparisonPanel_, Qt::RightDockWidgetArea);
    tabifyDockWidget(findChild<QDockWidget *>(QStringLiteral("origin")), comparisonDock_);

    eventModel_ = new EventLogModel(10000, this);
    eventView_ = new QTableView;
    eventView_->setModel(eventModel_);
    eventView_->setSelectionBehavior(QAbstractItemView::SelectRows);
    eventView_->horizontalHeader()->setStretchLastSection(true);
    eventView_->verticalHeader()->hide();
    connect(eventView_, &QTableView::clicked, this, [this](const QModelIndex &index) {
        const int layer = index.data(EventLogModel::LayerIdRole).toInt();
        const int step = index.data(EventLogModel::StepRole).toInt();
        if (layer >= 0)
            selectLayer(layer);
        if (step >= 0)
            selectStep(step);
    });
    dock(this, QString(), QStringLiteral("eventLog"), eventView_, Qt::BottomDockWidgetArea);
}

void MainWindow::selectScenario(const QString &id) { controls_->selectScenario(id); }

void MainWindow::setSteps(int steps) { controls_->setSteps(steps); }

bool MainWindow::startRun()
{
    if (!controller_.capabilities().start)
        return false;  // a recorded run is watched; File › Close run trains live again
    QString error;
    if (!files_->recordLiveRun(controls_->runName(), &error))
        showError(tr("This run is not recorded"), error);
    if (!controller_.start(controls_->runConfig(), &error)) {
        files_->dropRecording();
        showError(tr("Cannot start the run"), error);
        return false;
    }
    return true;
}

void MainWindow::resetRun()
{
    controller_.discardCurrentRun();
    replayRunner_->cancel();  // a replay of the run shown before must not land on the next
    files_->stopRecording();
    zoom_->drop();
    store_.reset({});
    plots_->clear();
    map_->clear();
    layerModel_->setLayers({});
    eventModel_->clear();
    origin_->clear();
    lastRecord_.reset();
    // The user's controls stay (pause on non-finite, recovery, LR): Scenario defaults resets them.
    updateStatus();
}

void MainWindow::selectLayer(int layer)
{
    const QModelIndex source = layerModel_->indexForLayer(layer);
    const QModelIndex index = layerProxy_->mapFromSource(source);
    if (!index.isValid())
        return;
    layerView_->setCurrentIndex(index);
    layerView_->scrollTo(index);
}

void MainWindow::selectStep(int step)
{
    plots_->setCursorStep(step);
    if (showingJob())
        rankView_->showStep(step);
}

void MainWindow::showError(const QString &title, const QString &message)
{
    eventModel_->append(Event{EventKind::Error, -1, -1, message.toStdString()});
    statusBar()->showMessage(title + QStringLiteral(": ") + message, 10000);
}

void MainWindow::warn(const QString &title, const QString &message)
{
    showError(title, message);
    // open(), not exec(): the window keeps streaming and tests are never blocked by the box.
    auto *box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

QCustomPlot *MainWindow::lossPlot() const { return plots_->lossPlot(); }
QString MainWindow::originText() const { return origin_->text(); }

void MainWindow::closeEvent(QCloseEvent *event)
{
    QSettings settings;
    controls_->saveSettings(settings);
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("window/presentation"), action(QStringLiteral("presentation"))->isChecked());
    controller_.stop();
    controller_.wait(5000);  // the run's summary reaches its run file
    files_->stopRecording();
    event->accept();
}

StretchLoader *MainWindow::stretchLoader() const
{
    return zoom_->loader();
}

}  // namespace nanscope
