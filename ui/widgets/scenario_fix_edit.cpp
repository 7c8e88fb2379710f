#include "widgets/scenario_fix_edit.h"

#include "models/core_text.h"

#include <QCheckBox>
#include <QDoubleValidator>
#include <QEvent>
#include <QHBoxLayout>
#include <QLineEdit>

namespace nanscope {

ScenarioFixEdit::ScenarioFixEdit(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("scenarioFix"));
    on_ = new QCheckBox;
    on_->setObjectName(QStringLiteral("scenarioFixSwitch"));
    value_ = new QLineEdit;
    value_->setObjectName(QStringLiteral("scenarioFixValue"));
    auto *validator = new QDoubleValidator(0.0, 1.0, 12, value_);
    validator->setNotation(QDoubleValidator::ScientificNotation);
    validator->setLocale(QLocale::c());  // "1e-07" in every language, as the command line takes it
    value_->setValidator(validator);
    value_->setMaximumWidth(90);
    auto *row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(on_, 1);
    row->addWidget(value_);
    connect(on_, &QCheckBox::toggled, this, [this](bool on) {
        value_->setEnabled(on);
        Q_EMIT edited();
    });
    connect(value_, &QLineEdit::editingFinished, this, [this] {
        if (on_->isChecked())
            Q_EMIT edited();
    });
}

void ScenarioFixEdit::setScenario(const std::string &scenario)
{
    fix_ = scenarioFix(scenario);
    value_->setVisible(fix_.hasValue());
    value_->setText(QString::number(fix_.defaultValue, 'g', 6));
    retranslate();
}

std::optional<double> ScenarioFixEdit::value() const
{
    if (!fix_.exists() || !on_->isChecked())
        return std::nullopt;
    if (!fix_.hasValue())
        return 0.0;
    bool ok = false;
    const double v = QLocale::c().toDouble(value_->text(), &ok);
    return ok && v > 0 ? v : fix_.defaultValue;
}

void ScenarioFixEdit::setValue(std::optional<double> value)
{
    const QSignalBlocker quiet(on_);
    on_->setChecked(value.has_value() && fix_.exists());
    value_->setEnabled(on_->isChecked());
    value_->setText(QString::number(value && *value > 0 ? *value : fix_.defaultValue, 'g', 6));
}

void ScenarioFixEdit::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

void ScenarioFixEdit::retranslate()
{
    if (!fix_.exists())
        return;
    const QString when = fix_.atStart ? tr("takes effect at the next Start") : tr("takes effect at the next step");
    on_->setText(fix_.atStart ? tr("%1 (at Start)").arg(coreText(fix_.name)) : coreText(fix_.name));
    on_->setToolTip(tr("The fix the lesson teaches: %1; %2").arg(coreText(fix_.what), when));
    value_->setToolTip(tr("%1 of the fix (a number above 0, such as 1e-6)").arg(QString::fromStdString(fix_.valueName)));
}

}  // namespace nanscope
