#include "widgets/learning_rate_edit.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSlider>

#include <algorithm>
#include <cmath>

namespace nanscope {

namespace {
constexpr int kNotchesPerDecade = 10;
constexpr double kMinLr = 1e-8;
constexpr double kMaxLr = 1e6;
}  // namespace

ScientificSpinBox::ScientificSpinBox(QWidget *parent) : QDoubleSpinBox(parent)
{
    setDecimals(15);  // QDoubleSpinBox rounds the value to its decimals: keep 1e-8 exact
    setRange(kMinLr, kMaxLr);
    setKeyboardTracking(false);
}

QString ScientificSpinBox::textFromValue(double value) const { return QString::number(value, 'g', 6); }

double ScientificSpinBox::valueFromText(const QString &text) const { return locale().toDouble(text); }

QValidator::State ScientificSpinBox::validate(QString &text, int &) const
{
    bool ok = false;
    const double v = locale().toDouble(text, &ok);
    if (ok && v >= minimum() && v <= maximum())
        return QValidator::Acceptable;
    // "1e", "1e-", "0." are on the way to a number.
    static const QRegularExpression partial(QStringLiteral("^[0-9]*[.,]?[0-9]*([eE][-+]?[0-9]*)?$"));
    return partial.match(text).hasMatch() ? QValidator::Intermediate : QValidator::Invalid;
}

void ScientificSpinBox::stepBy(int steps)
{
    setValue(std::clamp(value() * std::pow(10.0, steps / double(kNotchesPerDecade)), minimum(), maximum()));
}

LearningRateEdit::LearningRateEdit(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    slider_ = new QSlider(Qt::Horizontal);
    slider_->setRange(int(std::log10(kMinLr) * kNotchesPerDecade), int(std::log10(1e4) * kNotchesPerDecade));
    spin_ = new ScientificSpinBox;
    retranslate();
    layout->addWidget(slider_, 1);
    layout->addWidget(spin_);

    connect(slider_, &QSlider::valueChanged, this, [this](int notch) {
        if (syncing_)
            return;
        const QSignalBlocker block(spin_);
        spin_->setValue(std::pow(10.0, notch / double(kNotchesPerDecade)));
        if (!slider_->isSliderDown())
            Q_EMIT valueChanged(spin_->value());
    });
    connect(slider_, &QSlider::sliderReleased, this, [this] { Q_EMIT valueChanged(spin_->value()); });
    connect(spin_, &QDoubleSpinBox::valueChanged, this, [this](double lr) {
        syncing_ = true;
        slider_->setValue(int(std::lround(std::log10(lr) * kNotchesPerDecade)));
        syncing_ = false;
        Q_EMIT valueChanged(lr);
    });
}

double LearningRateEdit::value() const { return spin_->value(); }

void LearningRateEdit::setValue(double lr)
{
    const QSignalBlocker block(spin_);
    spin_->setValue(lr);
    syncing_ = true;
    slider_->setValue(int(std::lround(std::log10(spin_->value()) * kNotchesPerDecade)));
    syncing_ = false;
}

void LearningRateEdit::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

void LearningRateEdit::retranslate()
{
    slider_->setToolTip(tr("Learning rate on a log scale, 1e-8 to 1e4"));
    spin_->setToolTip(tr("Exact learning rate (scientific notation accepted: 3e-4)"));
}

}  // namespace nanscope
