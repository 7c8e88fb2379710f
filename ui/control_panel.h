#pragma once
// The run's settings and live controls: scenario, device, steps, seed, learning rate, gradient
// clipping, precision, the recovery policy's switches and pause-on-non-finite. Settings that
// define a run (scenario, device, steps, seed) apply at Start; the live controls are emitted as
// soon as the user changes them, and the session applies them at the next step.
#include "nanscope/controls.h"
#include "nanscope/session.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QSettings;
class QSpinBox;

namespace nanscope {

class LearningRateEdit;

class ControlPanel final : public QWidget {
    Q_OBJECT
public:
    explicit ControlPanel(QWidget *parent = nullptr);

    RunConfig runConfig() const;  // the scenario, steps, seed, device and current controls
    Controls controls() const;
    QString scenario() const;
    void selectScenario(const QString &id);
    void setSteps(int steps);
    void setControls(const Controls &controls);
    void loadScenarioDefaults();

    void saveSettings(QSettings &settings) const;
    void restoreSettings(const QSettings &settings);

    LearningRateEdit *learningRateEdit() const { return lr_; }
    QComboBox *deviceBox() const { return device_; }
    QComboBox *precisionBox() const { return precision_; }

Q_SIGNALS:
    void controlsEdited(const nanscope::Controls &controls);
    void scenarioChanged(const QString &id);

private:
    void emitControls();

    QComboBox *scenario_ = nullptr;
    QComboBox *device_ = nullptr;
    QSpinBox *steps_ = nullptr;
    QSpinBox *seed_ = nullptr;
    LearningRateEdit *lr_ = nullptr;
    QCheckBox *clipOn_ = nullptr;
    QDoubleSpinBox *clip_ = nullptr;
    QComboBox *precision_ = nullptr;
    QCheckBox *quarantine_ = nullptr;
    QCheckBox *zeroGrads_ = nullptr;
    QCheckBox *rollback_ = nullptr;
    QSpinBox *maxRetries_ = nullptr;
    QCheckBox *pause_ = nullptr;
    bool loading_ = false;
};

}  // namespace nanscope
