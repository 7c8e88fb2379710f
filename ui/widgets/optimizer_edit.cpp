#include "widgets/optimizer_edit.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QGridLayout>
#include <QLabel>

namespace nanscope {

OptimizerEdit::OptimizerEdit(QWidget *parent) : QWidget(parent)
{
    kind_ = new QComboBox;
    // The optimizers' own names stay as they are in every language.
    kind_->addItem(QString(), -1);
    kind_->addItem(QStringLiteral("SGD"), int(OptimizerKind::Sgd));
    kind_->addItem(QStringLiteral("Adam"), int(OptimizerKind::Adam));
    kind_->addItem(QStringLiteral("AdamW"), int(OptimizerKind::AdamW));
    momentum_ = new QDoubleSpinBox;
    momentum_->setRange(0.0, 0.999);
    momentum_->setDecimals(3);
    momentum_->setSingleStep(0.1);
    decayOn_ = new QCheckBox;
    decay_ = new QDoubleSpinBox;
    decay_->setRange(0.0, 10.0);
    decay_->setDecimals(4);
    decay_->setSingleStep(0.001);
    auto *grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(kind_, 0, 0, 1, 2);
    momentumLabel_ = new QLabel;
    grid->addWidget(momentumLabel_, 1, 0);
    grid->addWidget(momentum_, 1, 1);
    grid->addWidget(decayOn_, 2, 0);
    grid->addWidget(decay_, 2, 1);
    connect(kind_, &QComboBox::currentIndexChanged, this, &OptimizerEdit::updateEnabled);
    connect(decayOn_, &QCheckBox::toggled, this, &OptimizerEdit::updateEnabled);
    retranslate();
    updateEnabled();
}

void OptimizerEdit::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

void OptimizerEdit::retranslate()
{
    kind_->setItemText(0, tr("the scenario's own"));
    kind_->setItemData(0, tr("SGD or AdamW, as the scenario chooses; AdamW for a model file"), Qt::ToolTipRole);
    momentum_->setToolTip(tr("SGD's momentum (0: none)"));
    momentumLabel_->setText(tr("Momentum"));
    decayOn_->setText(tr("Weight decay"));
    decayOn_->setToolTip(tr("Off: the optimizer's default (0.01 for AdamW, 0 otherwise)"));
}

// Momentum is SGD's alone: offered once SGD is chosen.
void OptimizerEdit::updateEnabled()
{
    momentum_->setEnabled(kind_->currentData().toInt() == int(OptimizerKind::Sgd));
    decay_->setEnabled(decayOn_->isChecked());
}

OptimizerChoice OptimizerEdit::choice() const
{
    OptimizerChoice c;
    const int kind = kind_->currentData().toInt();
    if (kind >= 0)
        c.kind = OptimizerKind(kind);
    if (kind == int(OptimizerKind::Sgd) && momentum_->value() > 0.0)
        c.momentum = momentum_->value();
    if (decayOn_->isChecked())
        c.weightDecay = decay_->value();
    return c;
}

void OptimizerEdit::setChoice(const OptimizerChoice &c)
{
    kind_->setCurrentIndex(std::max(0, kind_->findData(c.kind ? int(*c.kind) : -1)));
    momentum_->setValue(c.momentum.value_or(0.0));
    decayOn_->setChecked(c.weightDecay.has_value());
    decay_->setValue(c.weightDecay.value_or(0.0));
    updateEnabled();
}

}  // namespace nanscope
