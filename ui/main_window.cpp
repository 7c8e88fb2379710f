#include "main_window.h"

#include "plot_series.h"

#include "nanscope/scenario.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <cmath>

namespace nanscope {

MainWindow::MainWindow(QWidget *parent) : QMainWindow(parent)
{
    setWindowTitle(QStringLiteral("NaNScope"));
    buildControls();

    auto *plots = new QSplitter(Qt::Vertical);
    lossPlot_ = new QCustomPlot;
    gradPlot_ = new QCustomPlot;
    for (auto [plot, name] : {std::pair{lossPlot_, QStringLiteral("loss")}, std::pair{gradPlot_, QStringLiteral("gradient norm")}}) {
        setUpSeriesPlot(plot, name);
        plots->addWidget(plot);
    }
    origin_ = new QLabel(tr("No run yet."));
    origin_->setWordWrap(true);
    auto *centre = new QWidget;
    auto *layout = new QVBoxLayout(centre);
    layout->addWidget(origin_);
    layout->addWidget(plots, 1);
    setCentralWidget(centre);

    log_ = new QListWidget;
    auto *logDock = new QDockWidget(tr("Event log"));
    logDock->setObjectName(QStringLiteral("eventLog"));
    logDock->setWidget(log_);
    addDockWidget(Qt::BottomDockWidgetArea, logDock);

    status_ = new QLabel(tr("idle"));
    statusBar()->addWidget(status_);

    connect(&controller_, &SessionController::runBegun, this, [this](int) { resetPlots(); });
    connect(&controller_, &SessionController::recordsArrived, this, &MainWindow::onRecords);
    connect(&controller_, &SessionController::eventArrived, this, &MainWindow::onEvent);
    connect(&controller_, &SessionController::sessionStateChanged, this, &MainWindow::onState);
    connect(&controller_, &SessionController::runCompleted, this, &MainWindow::onFinished);
    resize(1100, 750);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildControls()
{
    auto *panel = new QWidget;
    auto *form = new QFormLayout(panel);
    scenario_ = new QComboBox;
    for (const ScenarioInfo &s : scenarios())
        scenario_->addItem(QString::fromStdString(s.id), QString::fromStdString(s.id));
    steps_ = new QSpinBox;
    steps_->setRange(1, 10000000);
    seed_ = new QSpinBox;
    seed_->setRange(0, 1000000);
    seed_->setValue(1);
    lr_ = new QDoubleSpinBox;
    lr_->setDecimals(6);
    lr_->setRange(1e-6, 1e6);
    clipOn_ = new QCheckBox(tr("clip gradient norm"));
    clip_ = new QDoubleSpinBox;
    clip_->setRange(1e-3, 1e6);
    recovery_ = new QCheckBox(tr("full recovery policy"));
    pause_ = new QCheckBox(tr("pause on non-finite"));
    form->addRow(tr("Scenario"), scenario_);
    form->addRow(tr("Steps"), steps_);
    form->addRow(tr("Seed"), seed_);
    form->addRow(tr("Learning rate"), lr_);
    form->addRow(clipOn_, clip_);
    form->addRow(recovery_);
    form->addRow(pause_);

    auto loadDefaults = [this] {
        const ScenarioInfo *s = findScenario(scenario_->currentData().toString().toStdString());
        if (!s)
            return;
        steps_->setValue(s->defaultSteps);
        lr_->setValue(s->defaults.learningRate);
        clipOn_->setChecked(s->defaults.clipNorm.has_value());
        clip_->setValue(s->defaults.clipNorm.value_or(5.0));
        recovery_->setChecked(s->defaults.recovery.any());
        pause_->setChecked(s->defaults.pauseOnNonFinite);
    };
    connect(scenario_, &QComboBox::currentIndexChanged, this, loadDefaults);
    loadDefaults();
    for (QWidget *w : std::initializer_list<QWidget *>{lr_, clip_})
        connect(static_cast<QDoubleSpinBox *>(w), &QDoubleSpinBox::valueChanged, this, &MainWindow::pushControls);
    for (QCheckBox *c : {clipOn_, recovery_, pause_})
        connect(c, &QCheckBox::toggled, this, &MainWindow::pushControls);

    auto *buttons = new QGridLayout;
    startButton_ = new QPushButton(tr("&Start"));
    auto *pauseButton = new QPushButton(tr("&Pause"));
    auto *resumeButton = new QPushButton(tr("&Resume"));
    auto *stepButton = new QPushButton(tr("S&tep"));
    auto *stopButton = new QPushButton(tr("St&op"));
    auto *rollbackButton = new QPushButton(tr("Roll &back"));
    buttons->addWidget(startButton_, 0, 0);
    buttons->addWidget(stopButton, 0, 1);
    buttons->addWidget(pauseButton, 1, 0);
    buttons->addWidget(resumeButton, 1, 1);
    buttons->addWidget(stepButton, 2, 0);
    buttons->addWidget(rollbackButton, 2, 1);
    form->addRow(buttons);
    Session &s = controller_.session();
    connect(startButton_, &QPushButton::clicked, this, &MainWindow::startRun);
    connect(pauseButton, &QPushButton::clicked, this, [&s] { s.pause(); });
    connect(resumeButton, &QPushButton::clicked, this, [&s] { s.resume(); });
    connect(stepButton, &QPushButton::clicked, this, [&s] { s.stepOnce(1); });
    connect(stopButton, &QPushButton::clicked, this, [&s] { s.stop(); });
    connect(rollbackButton, &QPushButton::clicked, this, [&s] { s.requestRollback(); });

    auto *dock = new QDockWidget(tr("Controls"));
    dock->setObjectName(QStringLiteral("controls"));
    dock->setWidget(panel);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
}

Controls MainWindow::currentControls() const
{
    Controls c;
    c.learningRate = lr_->value();
    if (clipOn_->isChecked())
        c.clipNorm = clip_->value();
    c.recovery = recovery_->isChecked() ? RecoveryPolicy::full() : RecoveryPolicy::none();
    c.pauseOnNonFinite = pause_->isChecked();
    return c;
}

void MainWindow::pushControls() { controller_.session().setControls(currentControls()); }

void MainWindow::selectScenario(const QString &id)
{
    const int i = scenario_->findData(id);
    if (i >= 0)
        scenario_->setCurrentIndex(i);
}

void MainWindow::setSteps(int steps) { steps_->setValue(steps); }

bool MainWindow::startRun()
{
    RunConfig config;
    config.scenario = scenario_->currentData().toString().toStdString();
    config.steps = steps_->value();
    config.seed = std::uint64_t(seed_->value());
    config.controls = currentControls();
    QString error;
    if (!controller_.start(config, &error)) {
        onEvent(-1, int(EventKind::Error), error);
        return false;
    }
    return true;
}

void MainWindow::resetPlots()
{
    for (QCustomPlot *p : {lossPlot_, gradPlot_})
        clearSeriesPlot(p);
    log_->clear();
    origin_->setText(tr("Running %1 …").arg(scenario_->currentText()));
    recordsShown_ = 0;
}

void MainWindow::onRecords(const QVector<StepRecordPtr> &records)
{
    for (const StepRecordPtr &r : records) {
        appendPoint(lossPlot_, r->step, r->loss);
        appendPoint(gradPlot_, r->step, r->gradNorm);
        if (r->nonFinite() && origin_->property("shown").toInt() != controller_.session().runId()) {
            origin_->setText(tr("First non-finite value at step %1, phase %2, layer '%3'%4\n%5")
                                 .arg(r->step)
                                 .arg(QString::fromLatin1(phaseName(r->origin.phase)))
                                 .arg(QString::fromStdString(r->origin.layerPath))
                                 .arg(r->origin.op.empty() ? QString() : QStringLiteral(", op ") + QString::fromStdString(r->origin.op))
                                 .arg(QString::fromStdString(r->origin.explanation)));
            origin_->setProperty("shown", controller_.session().runId());
        }
    }
    recordsShown_ += records.size();
    const StepRecordPtr &last = records.back();
    status_->setText(tr("step %1, %2 ms a step").arg(last->step).arg(last->stepMillis, 0, 'f', 2));
    for (QCustomPlot *p : {lossPlot_, gradPlot_})
        rescaleAndReplot(p);
}

void MainWindow::onEvent(int step, int kind, const QString &text)
{
    auto *item = new QListWidgetItem(step >= 0 ? tr("step %1: %2").arg(step).arg(text) : text);
    if (kind == int(EventKind::Error) || kind == int(EventKind::FirstNonFinite))
        item->setForeground(Qt::red);
    log_->addItem(item);
    log_->scrollToBottom();
}

void MainWindow::onState(int state)
{
    status_->setText(QString::fromLatin1(sessionStateName(SessionState(state))));
}

void MainWindow::onFinished(const QString &error)
{
    if (!error.isEmpty())
        origin_->setText(tr("The run failed: %1").arg(error));
    Q_EMIT runEnded();
}

QString MainWindow::originText() const { return origin_->text(); }

}  // namespace nanscope
