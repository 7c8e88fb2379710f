#pragma once
// The first NaNScope window: pick a scenario, set the live controls, run, and watch the loss and
// gradient norm (non-finite steps marked in red) with an event log. The full window (NaN map,
// layer tree, lessons) is the GUI issue's work.
#include "session_controller.h"

#include <QMainWindow>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QListWidget;
class QPushButton;
class QSpinBox;

namespace nanscope {

class MainWindow final : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    void selectScenario(const QString &id);
    void setSteps(int steps);
    bool startRun();
    SessionController &controller() { return controller_; }
    QCustomPlot *lossPlot() const { return lossPlot_; }
    int recordsShown() const { return recordsShown_; }
    QString originText() const;

Q_SIGNALS:
    void runEnded();

private:
    void buildControls();
    Controls currentControls() const;
    void pushControls();
    void onRecords(const QVector<StepRecordPtr> &records);
    void onEvent(int step, int kind, const QString &text);
    void onState(int state);
    void onFinished(const QString &error);
    void resetPlots();

    SessionController controller_;
    QComboBox *scenario_ = nullptr;
    QSpinBox *steps_ = nullptr;
    QSpinBox *seed_ = nullptr;
    QDoubleSpinBox *lr_ = nullptr;
    QCheckBox *clipOn_ = nullptr;
    QDoubleSpinBox *clip_ = nullptr;
    QCheckBox *recovery_ = nullptr;
    QCheckBox *pause_ = nullptr;
    QPushButton *startButton_ = nullptr;
    QCustomPlot *lossPlot_ = nullptr;
    QCustomPlot *gradPlot_ = nullptr;
    QListWidget *log_ = nullptr;
    QLabel *origin_ = nullptr;
    QLabel *status_ = nullptr;
    int recordsShown_ = 0;
    double lastReplotMs_ = 0;
};

}  // namespace nanscope
