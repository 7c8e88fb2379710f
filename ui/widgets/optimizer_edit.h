#pragma once
// The optimizer a run starts with: the scenario's or model file's own, or SGD (with a momentum),
// Adam or AdamW, each with a weight decay. A run setting: it applies at Start.
#include "nanscope/optimizer.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;

namespace nanscope {

class OptimizerEdit final : public QWidget {
    Q_OBJECT
public:
    explicit OptimizerEdit(QWidget *parent = nullptr);

    OptimizerChoice choice() const;
    void setChoice(const OptimizerChoice &choice);

    QComboBox *kindBox() const { return kind_; }
    QDoubleSpinBox *momentumBox() const { return momentum_; }
    QCheckBox *weightDecayOn() const { return decayOn_; }
    QDoubleSpinBox *weightDecayBox() const { return decay_; }

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslate();
    QLabel *momentumLabel_ = nullptr;
    void updateEnabled();

    QComboBox *kind_ = nullptr;
    QDoubleSpinBox *momentum_ = nullptr;
    QCheckBox *decayOn_ = nullptr;
    QDoubleSpinBox *decay_ = nullptr;
};

}  // namespace nanscope
