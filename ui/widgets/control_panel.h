#pragma once
// The run's settings and live controls: scenario or model file, device, steps, seed, optimizer, learning rate, gradient
// clipping, precision, the scenario's own fix, the recovery policy's switches and pause-on-non-finite. Settings that
// define a run (scenario, device, steps, seed, optimizer) apply at Start; the live controls are emitted as
// soon as the user changes them, and the session applies them at the next step.
#include "widgets/input_shape_dialog.h"

#include "nanscope/controls.h"
#include "nanscope/run_config.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QGroupBox;
class QPushButton;
class QDoubleSpinBox;
class QSettings;
class QSpinBox;

namespace nanscope {

class LearningRateEdit;
class OptimizerEdit;
class ScenarioFixEdit;

class ControlPanel final : public QWidget {
    Q_OBJECT
public:
    explicit ControlPanel(QWidget *parent = nullptr);

    RunConfig runConfig() const;  // the scenario, steps, seed, device and current controls
    Controls controls() const;
    QString scenario() const;  // empty while a model file is selected
    void selectScenario(const QString &id);
    // A run file of a loop another program recorded (nanscope.record): shown by its name, as the
    // source a model file is shown by; Start with it selected is refused with why.
    void showRecordedLoop(const QString &name);
    bool recordedLoopSelected() const;
    // Adds (or replaces) the "model" entry of the scenario picker and selects it; the model is
    // loaded at Start, where the session reports what is wrong with it.
    void setModel(const QString &path, const ModelInputChoice &input);
    bool modelSelected() const;
    QString modelPath() const { return modelPath_; }
    const ModelInputChoice &modelInput() const { return modelInput_; }
    QString runName() const;  // the scenario id, or the model file's or recorded loop's base name
    void setSteps(int steps);
    void setControls(const Controls &controls);
    void loadScenarioDefaults();
    // Shows what a recorded run ran with: its scenario or model, steps, seed, device, controls.
    void showRunConfig(const RunConfig &config);
    // Steering a Python loop: only what reaches it stays live (learning rate, clipping, recovery,
    // pause on non-finite); the precision is the loop's own autocast's.
    void setSteeringOnly(bool on);

    void saveSettings(QSettings &settings) const;
    void restoreSettings(const QSettings &settings);

    LearningRateEdit *learningRateEdit() const { return lr_; }
    QComboBox *deviceBox() const { return device_; }
    QComboBox *precisionBox() const { return precision_; }
    OptimizerEdit *optimizerEdit() const { return optimizer_; }
    ScenarioFixEdit *fixEdit() const { return fix_; }
    // Turns the scenario's own fix on or off; false when the scenario has none.
    bool switchScenarioFix(bool on);

Q_SIGNALS:
    void controlsEdited(const nanscope::Controls &controls);
    void scenarioChanged(const QString &id);

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslate();
    QString modelEntryText() const;
    void emitControls();
    void labelPrecisions();  // for the selected device

    QComboBox *scenario_ = nullptr;
    QComboBox *device_ = nullptr;
    QSpinBox *steps_ = nullptr;
    QSpinBox *seed_ = nullptr;
    QSpinBox *forecast_ = nullptr;  // the forecast horizon, in steps
    OptimizerEdit *optimizer_ = nullptr;
    LearningRateEdit *lr_ = nullptr;
    QCheckBox *clipOn_ = nullptr;
    QDoubleSpinBox *clip_ = nullptr;
    QComboBox *precision_ = nullptr;
    QCheckBox *quarantine_ = nullptr;
    QCheckBox *zeroGrads_ = nullptr;
    QCheckBox *rollback_ = nullptr;
    QSpinBox *maxRetries_ = nullptr;
    QCheckBox *pause_ = nullptr;
    ScenarioFixEdit *fix_ = nullptr;  // the scenario's own fix, where it has one
    QGroupBox *runBox_ = nullptr;
    QGroupBox *liveBox_ = nullptr;
    QGroupBox *recoveryBox_ = nullptr;
    QPushButton *defaults_ = nullptr;
    QString modelPath_;
    QString recordedLoop_;
    ModelInputChoice modelInput_;
    bool loading_ = false;
};

}  // namespace nanscope
