#pragma once
// The learning rate as a log-scale slider (one notch = a factor of 10^0.1) beside an exact spin
// box that reads and writes scientific notation (1e-3), kept in step with each other.
#include <QDoubleSpinBox>
#include <QWidget>

class QSlider;

namespace nanscope {

class ScientificSpinBox final : public QDoubleSpinBox {
    Q_OBJECT
public:
    explicit ScientificSpinBox(QWidget *parent = nullptr);
    QString textFromValue(double value) const override;
    double valueFromText(const QString &text) const override;
    QValidator::State validate(QString &text, int &pos) const override;
    void stepBy(int steps) override;  // arrows move a tenth of a decade, like the slider
};

class LearningRateEdit final : public QWidget {
    Q_OBJECT
public:
    explicit LearningRateEdit(QWidget *parent = nullptr);
    double value() const;
    void setValue(double lr);
    QSlider *slider() const { return slider_; }
    ScientificSpinBox *spinBox() const { return spin_; }

Q_SIGNALS:
    // Emitted once the user settles on a value (slider released, spin box edited), not on every
    // pixel of a drag: each emission becomes a control change in the run.
    void valueChanged(double lr);

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslate();
    QSlider *slider_ = nullptr;
    ScientificSpinBox *spin_ = nullptr;
    bool syncing_ = false;
};

}  // namespace nanscope
