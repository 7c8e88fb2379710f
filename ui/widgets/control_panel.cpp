#include "widgets/control_panel.h"

#include "models/core_text.h"
#include "widgets/learning_rate_edit.h"
#include "widgets/optimizer_edit.h"
#include "widgets/scenario_fix_edit.h"

#include "nanscope/devices.h"
#include "nanscope/precision.h"
#include "nanscope/scenario.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QEvent>
#include <QGroupBox>
#include <QLabel>
#include <QSettings>
#include <QSignalBlocker>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <initializer_list>

namespace nanscope {

namespace {

// The scenario picker's data for the model entry: no scenario id starts with a colon.
const QString kModelEntry = QStringLiteral(":model");
const QString kRecordedLoopEntry = QStringLiteral(":recorded-loop");

void disableItem(QComboBox *box, int index, const QString &reason)
{
    auto *model = qobject_cast<QStandardItemModel *>(box->model());
    if (QStandardItem *item = model ? model->item(index) : nullptr) {
        item->setEnabled(false);
        item->setToolTip(reason);
    }
}

}  // namespace

ControlPanel::ControlPanel(QWidget *parent) : QWidget(parent)
{
    auto *outer = new QVBoxLayout(this);
    // Every text is set by retranslate(), now and when the language changes.
    runBox_ = new QGroupBox;
    auto *runForm = new QFormLayout(runBox_);
    scenario_ = new QComboBox;
    for (const ScenarioInfo &s : scenarios())
        scenario_->addItem(QString::fromStdString(s.id), QString::fromStdString(s.id));
    device_ = new QComboBox;
    for (const DeviceInfo &d : devices()) {
        device_->addItem(QString::fromStdString(d.description), QString::fromStdString(d.id));
        if (!d.available)
            disableItem(device_, device_->count() - 1, QString::fromStdString(d.reason));
    }
    steps_ = new QSpinBox;
    steps_->setRange(1, 100000000);
    seed_ = new QSpinBox;
    seed_->setRange(0, 1000000000);
    seed_->setValue(1);
    forecast_ = new QSpinBox;
    forecast_->setObjectName(QStringLiteral("forecastHorizon"));
    forecast_->setRange(0, 100000);
    forecast_->setValue(RunConfig{}.forecastHorizon);
    optimizer_ = new OptimizerEdit;
    for (QWidget *field : std::initializer_list<QWidget *>{scenario_, device_, steps_, seed_, forecast_, optimizer_})
        runForm->addRow(new QLabel, field);  // an empty text would make no label to translate
    outer->addWidget(runBox_);

    liveBox_ = new QGroupBox;
    auto *liveForm = new QFormLayout(liveBox_);
    lr_ = new LearningRateEdit;
    clipOn_ = new QCheckBox;
    clip_ = new QDoubleSpinBox;
    clip_->setRange(1e-3, 1e6);
    clip_->setDecimals(3);
    clip_->setKeyboardTracking(false);
    precision_ = new QComboBox;
    for (const Precision p : {Precision::FP32, Precision::FP16, Precision::BF16})
        precision_->addItem(QString(), int(p));
    labelPrecisions();
    liveForm->addRow(new QLabel, lr_);
    liveForm->addRow(clipOn_, clip_);
    liveForm->addRow(new QLabel, precision_);
    fix_ = new ScenarioFixEdit;
    liveForm->addRow(new QLabel, fix_);
    outer->addWidget(liveBox_);

    recoveryBox_ = new QGroupBox;
    auto *recoveryForm = new QFormLayout(recoveryBox_);
    quarantine_ = new QCheckBox;
    zeroGrads_ = new QCheckBox;
    rollback_ = new QCheckBox;
    maxRetries_ = new QSpinBox;
    maxRetries_->setRange(1, 100);
    pause_ = new QCheckBox;
    recoveryForm->addRow(quarantine_);
    recoveryForm->addRow(zeroGrads_);
    recoveryForm->addRow(rollback_);
    recoveryForm->addRow(new QLabel, maxRetries_);
    recoveryForm->addRow(pause_);
    outer->addWidget(recoveryBox_);
    // Reset clears the run and keeps these controls; this brings back the scenario's own.
    defaults_ = new QPushButton;
    defaults_->setObjectName(QStringLiteral("defaultsButton"));
    connect(defaults_, &QPushButton::clicked, this, &ControlPanel::loadScenarioDefaults);
    outer->addWidget(defaults_);
    outer->addStretch();

    connect(scenario_, &QComboBox::currentIndexChanged, this, [this] {
        loadScenarioDefaults();
        Q_EMIT scenarioChanged(scenario());
    });
    connect(lr_, &LearningRateEdit::valueChanged, this, &ControlPanel::emitControls);
    connect(clip_, &QDoubleSpinBox::valueChanged, this, &ControlPanel::emitControls);
    connect(maxRetries_, &QSpinBox::valueChanged, this, &ControlPanel::emitControls);
    connect(precision_, &QComboBox::currentIndexChanged, this, &ControlPanel::emitControls);
    connect(fix_, &ScenarioFixEdit::edited, this, &ControlPanel::emitControls);
    for (QCheckBox *c : {clipOn_, quarantine_, zeroGrads_, rollback_, pause_})
        connect(c, &QCheckBox::toggled, this, &ControlPanel::emitControls);
    connect(device_, &QComboBox::currentIndexChanged, this, &ControlPanel::labelPrecisions);
    connect(clipOn_, &QCheckBox::toggled, clip_, &QWidget::setEnabled);
    connect(rollback_, &QCheckBox::toggled, maxRetries_, &QWidget::setEnabled);
    retranslate();
    loadScenarioDefaults();
}

void ControlPanel::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

void ControlPanel::retranslate()
{
    runBox_->setTitle(tr("Run"));
    liveBox_->setTitle(tr("Live controls (apply at the next step)"));
    recoveryBox_->setTitle(tr("Recovery policy"));
    const std::pair<QWidget *, QString> labels[] = {
        {scenario_, tr("Scenario")},          {device_, tr("Device")},       {steps_, tr("Steps")},
        {seed_, tr("Seed")},                  {forecast_, tr("Forecasts")},  {optimizer_, tr("Optimizer")},
        {lr_, tr("Learning rate")},           {precision_, tr("Precision")},  {fix_, tr("Lesson's fix")},
        {maxRetries_, tr("Retries before stopping")}};
    for (const auto &[field, text] : labels)
        if (auto *form = qobject_cast<QFormLayout *>(field->parentWidget()->layout()))
            if (auto *label = qobject_cast<QLabel *>(form->labelForField(field)))
                label->setText(text);
    steps_->setToolTip(tr("Steps to train before the run finishes"));
    seed_->setToolTip(tr("The same seed gives the same run, step for step"));
    forecast_->setSuffix(tr(" steps ahead"));
    forecast_->setSpecialValueText(tr("off"));
    forecast_->setToolTip(tr("Warn when a layer's values would overflow (or vanish, in fp16 and bf16) within this "
                             "many steps; 0: no forecasts"));
    clipOn_->setText(tr("Clip gradient norm at"));
    labelPrecisions();
    precision_->setItemData(
        1, tr("fp16 with dynamic loss scaling (emulated on the CPU by rounding layer outputs through half)"),
        Qt::ToolTipRole);
    quarantine_->setText(tr("Quarantine non-finite samples (by index)"));
    zeroGrads_->setText(tr("Zero non-finite gradients"));
    rollback_->setText(tr("On a non-finite loss, roll back and halve the LR"));
    maxRetries_->setToolTip(tr("Rollbacks in a row before the run stops with a message"));
    pause_->setText(tr("Pause on non-finite (before the update)"));
    defaults_->setText(tr("Scenario &defaults"));
    defaults_->setToolTip(tr("Set the steps and every control above back to the scenario's (or model's) defaults"));
    for (const ScenarioInfo &s : scenarios())
        scenario_->setItemData(scenario_->findData(QString::fromStdString(s.id)), coreText(s.title), Qt::ToolTipRole);
    if (const int entry = scenario_->findData(kModelEntry); entry >= 0)
        scenario_->setItemText(entry, modelEntryText());
    if (const int entry = scenario_->findData(kRecordedLoopEntry); entry >= 0) {
        scenario_->setItemText(entry, tr("Recorded loop: %1").arg(recordedLoop_));
        scenario_->setItemData(
            entry, tr("A training loop recorded by nanscope.record (Python): it is watched, not trained here"),
            Qt::ToolTipRole);
    }
}

QString ControlPanel::modelEntryText() const { return tr("Model: %1").arg(QFileInfo(modelPath_).fileName()); }

void ControlPanel::labelPrecisions()
{
    // The same words as the report and the event log: "fp16 (emulated on CPU)" on the CPU.
    const std::string device = device_->currentData().toString().toStdString();
    for (int i = 0; i < precision_->count(); ++i)
        precision_->setItemText(
            i, coreText(precisionLabel(Precision(precision_->itemData(i).toInt()), device)));
}

QString ControlPanel::scenario() const
{
    const QString entry = scenario_->currentData().toString();
    return entry == kModelEntry || entry == kRecordedLoopEntry ? QString() : entry;
}

bool ControlPanel::modelSelected() const { return scenario_->currentData().toString() == kModelEntry; }

bool ControlPanel::recordedLoopSelected() const
{
    return scenario_->currentData().toString() == kRecordedLoopEntry;
}

QString ControlPanel::runName() const
{
    if (recordedLoopSelected())
        return QFileInfo(recordedLoop_).completeBaseName();
    return modelSelected() ? QFileInfo(modelPath_).completeBaseName() : scenario();
}

void ControlPanel::setModel(const QString &path, const ModelInputChoice &input)
{
    modelPath_ = path;
    modelInput_ = input;
    int entry = scenario_->findData(kModelEntry);
    if (entry < 0) {
        scenario_->insertItem(0, QString(), kModelEntry);
        scenario_->insertSeparator(1);
        entry = 0;
    }
    scenario_->setItemText(entry, modelEntryText());
    scenario_->setItemData(entry, QStringLiteral("%1\n%2").arg(path, describeModelInput(input)), Qt::ToolTipRole);
    if (scenario_->currentIndex() == entry) {  // a new file in place of the last one: same signals as a new pick
        loadScenarioDefaults();
        Q_EMIT scenarioChanged(scenario());
    } else {
        scenario_->setCurrentIndex(entry);
    }
}

void ControlPanel::selectScenario(const QString &id)
{
    const int i = scenario_->findData(id);
    if (i >= 0)
        scenario_->setCurrentIndex(i);
}

void ControlPanel::setSteps(int steps) { steps_->setValue(steps); }

bool ControlPanel::switchScenarioFix(bool on)
{
    if (!fix_->fix().exists())
        return false;
    fix_->switchBox()->setChecked(on);
    return true;
}

Controls ControlPanel::controls() const
{
    Controls c;
    c.learningRate = lr_->value();
    if (clipOn_->isChecked())
        c.clipNorm = clip_->value();
    c.precision = Precision(precision_->currentData().toInt());
    c.recovery.quarantineSamples = quarantine_->isChecked();
    c.recovery.zeroNonFiniteGrads = zeroGrads_->isChecked();
    c.recovery.rollbackOnNonFiniteLoss = rollback_->isChecked();
    c.recovery.maxRetries = maxRetries_->value();
    c.pauseOnNonFinite = pause_->isChecked();
    c.fix = fix_->value();
    return c;
}

void ControlPanel::setControls(const Controls &c)
{
    loading_ = true;
    lr_->setValue(c.learningRate);
    clipOn_->setChecked(c.clipNorm.has_value());
    clip_->setValue(c.clipNorm.value_or(5.0));
    clip_->setEnabled(c.clipNorm.has_value());
    precision_->setCurrentIndex(precision_->findData(int(c.precision)));
    quarantine_->setChecked(c.recovery.quarantineSamples);
    zeroGrads_->setChecked(c.recovery.zeroNonFiniteGrads);
    rollback_->setChecked(c.recovery.rollbackOnNonFiniteLoss);
    maxRetries_->setValue(c.recovery.maxRetries);
    maxRetries_->setEnabled(c.recovery.rollbackOnNonFiniteLoss);
    pause_->setChecked(c.pauseOnNonFinite);
    fix_->setScenario(scenario().toStdString());  // shown only for a scenario with a fix of its own
    fix_->setValue(c.fix);
    static_cast<QFormLayout *>(liveBox_->layout())->setRowVisible(fix_, fix_->fix().exists());
    loading_ = false;
}

void ControlPanel::loadScenarioDefaults()
{
    RunConfig config;  // the same defaults a run of the command line starts from
    config.modelPath = modelSelected() ? modelPath().toStdString() : std::string();
    config.scenario = scenario().toStdString();
    if (!config.usesModelFile() && !findScenario(config.scenario))
        return;
    steps_->setValue(defaultSteps(config));
    optimizer_->setChoice({});
    setControls(defaultControls(config));
}

void ControlPanel::showRecordedLoop(const QString &name)
{
    recordedLoop_ = name;
    int entry = scenario_->findData(kRecordedLoopEntry);
    if (entry < 0) {
        scenario_->insertItem(0, QString(), kRecordedLoopEntry);
        entry = 0;
    }
    retranslate();  // the entry's text and tooltip
    QSignalBlocker quiet(scenario_);  // its defaults are no scenario's: keep the run's own
    scenario_->setCurrentIndex(entry);
}

void ControlPanel::showRunConfig(const RunConfig &config)
{
    if (config.isRecordedLoop()) {
        showRecordedLoop(QString::fromStdString(config.recordedLoop));
    } else if (config.usesModelFile()) {
        ModelInputChoice input;
        input.shape = config.inputShape;
        input.tokenIds = config.tokenIds;
        input.vocab = config.vocab;
        input.inputsPath = QString::fromStdString(config.inputsPath);
        input.targetsPath = QString::fromStdString(config.targetsPath);
        input.loss = QString::fromStdString(config.loss);
        input.sideInputs = config.sideInputs;
        input.output = QString::fromStdString(config.output);
        setModel(QString::fromStdString(config.modelPath), input);
    } else {
        selectScenario(QString::fromStdString(config.scenario));
    }
    steps_->setValue(stepsToRun(config));
    seed_->setValue(int(config.seed));
    forecast_->setValue(config.forecastHorizon);
    optimizer_->setChoice(config.optimizer);
    if (const int d = device_->findData(QString::fromStdString(config.device)); d >= 0)
        device_->setCurrentIndex(d);
    setControls(initialControls(config));
}

void ControlPanel::setSteeringOnly(bool on)
{
    for (QWidget *w : std::initializer_list<QWidget *>{runBox_, precision_, maxRetries_, fix_})
        w->setEnabled(!on);
    precision_->setToolTip(on ? tr("A Python loop runs in the precision its own autocast and dtype give it") : QString());
}

RunConfig ControlPanel::runConfig() const
{
    RunConfig config;
    config.scenario = scenario().toStdString();
    config.steps = steps_->value();
    config.seed = std::uint64_t(seed_->value());
    config.forecastHorizon = forecast_->value();
    config.device = device_->currentData().toString().toStdString();
    config.controls = controls();
    config.optimizer = optimizer_->choice();
    if (recordedLoopSelected())
        config.recordedLoop = recordedLoop_.toStdString();  // refused by the session, with why
    if (modelSelected()) {
        config.modelPath = modelPath_.toStdString();
        config.inputShape = modelInput_.shape;
        config.tokenIds = modelInput_.tokenIds;
        config.vocab = modelInput_.vocab;
        config.inputsPath = modelInput_.inputsPath.toStdString();
        config.targetsPath = modelInput_.targetsPath.toStdString();
        config.loss = modelInput_.loss.toStdString();
        config.sideInputs = modelInput_.sideInputs;
        config.output = modelInput_.output.toStdString();
    }
    return config;
}

void ControlPanel::emitControls()
{
    if (!loading_)
        Q_EMIT controlsEdited(controls());
}

// A model file is not restored: it may be gone by the next start, and its input choice is the
// user's to make again.
void ControlPanel::saveSettings(QSettings &settings) const
{
    if (!modelSelected())
        settings.setValue(QStringLiteral("run/scenario"), scenario());
    settings.setValue(QStringLiteral("run/device"), device_->currentData());
    settings.setValue(QStringLiteral("run/steps"), steps_->value());
    settings.setValue(QStringLiteral("run/seed"), seed_->value());
    settings.setValue(QStringLiteral("run/forecast-horizon"), forecast_->value());
}

// Only the run's settings come back: the live controls start from the scenario's defaults, so a
// lesson always starts from the failure it teaches.
void ControlPanel::restoreSettings(const QSettings &settings)
{
    selectScenario(settings.value(QStringLiteral("run/scenario"), scenario()).toString());
    const int device = device_->findData(settings.value(QStringLiteral("run/device"), QStringLiteral("cpu")));
    if (device >= 0 && device_->model()->flags(device_->model()->index(device, 0)) & Qt::ItemIsEnabled)
        device_->setCurrentIndex(device);
    if (settings.contains(QStringLiteral("run/steps")))
        steps_->setValue(settings.value(QStringLiteral("run/steps")).toInt());
    seed_->setValue(settings.value(QStringLiteral("run/seed"), seed_->value()).toInt());
    forecast_->setValue(settings.value(QStringLiteral("run/forecast-horizon"), forecast_->value()).toInt());
}

}  // namespace nanscope
