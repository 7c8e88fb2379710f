#include "widgets/map_colour_scale.h"

#include <QEvent>

namespace nanscope {

namespace {

// The texts measureScale() (ui/run, Qt-free) writes, with the precision's name as %1: the same
// sentences, found again here to be translated.
const char *const kScaleTexts[] = {
    QT_TRANSLATE_NOOP("nanscope::MapColourScale", "share of NaN/Inf values"),
    QT_TRANSLATE_NOOP("nanscope::MapColourScale", "largest |value|"),
    QT_TRANSLATE_NOOP("nanscope::MapColourScale", "largest |value|; %1 max: off scale"),
    QT_TRANSLATE_NOOP("nanscope::MapColourScale", "largest |value| / %1 max"),
    QT_TRANSLATE_NOOP("nanscope::MapColourScale", "|Δw| / |w| per step"),
    QT_TRANSLATE_NOOP("nanscope::MapColourScale", "relative difference (grey: same; red: one non-finite)"),
    QT_TRANSLATE_NOOP("nanscope::MapColourScale", "parameter-gradient norm"),
    QT_TRANSLATE_NOOP("nanscope::MapColourScale", "finite"),
    QT_TRANSLATE_NOOP("nanscope::MapColourScale", "any"),
    QT_TRANSLATE_NOOP("nanscope::MapColourScale", "half"),
    QT_TRANSLATE_NOOP("nanscope::MapColourScale", "all"),
    QT_TRANSLATE_NOOP("nanscope::MapColourScale", "%1 max"),
};

}  // namespace

QString MapColourScale::localized(const std::string &english)
{
    const QString text = QString::fromStdString(english);
    for (const char *source : kScaleTexts) {
        const QString pattern = QString::fromUtf8(source);
        if (!pattern.contains(QLatin1String("%1"))) {
            if (text == pattern)
                return tr(source);
            continue;
        }
        for (const Precision p : {Precision::FP32, Precision::FP16, Precision::BF16}) {
            const QString name = QString::fromLatin1(precisionName(p));
            if (text == QString(pattern).replace(QLatin1String("%1"), name))
                return tr(source).arg(name);
        }
    }
    return text;  // a number: "1e-3", "100%"
}

void MapColourScale::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        showScale(shown_);
    QCustomPlot::changeEvent(event);
}

QString MapColourScale::label() const { return scale_->label(); }

MapColourScale::MapColourScale(QWidget *parent) : QCustomPlot(parent)
{
    setObjectName(QStringLiteral("mapScale"));
    setFixedHeight(48);
    setMinimumWidth(260);
    plotLayout()->clear();
    scale_ = new QCPColorScale(this);
    scale_->setType(QCPAxis::atBottom);
    scale_->setBarWidth(10);
    scale_->axis()->setTickLength(0, 3);
    scale_->axis()->setSubTicks(false);
    // Room at both ends, so the labels of the end ticks ("finite", "fp16 max") are not cut off.
    scale_->setAutoMargins(QCP::msTop | QCP::msBottom);
    scale_->setMargins(QMargins(24, 0, 28, 0));
    plotLayout()->addElement(0, 0, scale_);
}

QCPColorGradient MapColourScale::gradientFor(MapMeasure measure)
{
    QCPColorGradient g;
    g.clearColorStops();
    if (measure == MapMeasure::NonFinite) {
        g.setColorStopAt(0.0, QColor(235, 235, 235));
        g.setColorStopAt(0.19, QColor(235, 235, 235));
        g.setColorStopAt(0.2, QColor(255, 170, 60));
        g.setColorStopAt(1.0, QColor(170, 0, 0));
    } else if (measure == MapMeasure::Difference) {
        // Grey where the runs agree, warming with the difference, red where one is not finite.
        g.setColorStopAt(0.0, QColor(225, 225, 225));
        g.setColorStopAt(0.01, QColor(250, 240, 170));
        g.setColorStopAt(0.6, QColor(245, 160, 50));
        g.setColorStopAt(0.99, QColor(200, 60, 20));
        g.setColorStopAt(1.0, QColor(170, 0, 0));
    } else {
        // Cool for small, hot near the top of the scale (overflow for magnitude and headroom).
        g.setColorStopAt(0.0, QColor(40, 40, 120));
        g.setColorStopAt(0.35, QColor(60, 140, 200));
        g.setColorStopAt(0.6, QColor(120, 200, 120));
        g.setColorStopAt(0.85, QColor(250, 220, 60));
        g.setColorStopAt(0.97, QColor(240, 120, 30));
        g.setColorStopAt(1.0, QColor(170, 0, 0));
    }
    g.setNanHandling(QCPColorGradient::nhTransparent);
    return g;
}

void MapColourScale::setMeasure(MapMeasure measure) { scale_->setGradient(gradientFor(measure)); }

void MapColourScale::showScale(const MeasureScale &scale)
{
    scale_->setDataRange(QCPRange(scale.lower, scale.upper));
    QSharedPointer<QCPAxisTickerText> ticks(new QCPAxisTickerText);
    for (const auto &[value, label] : scale.ticks)
        ticks->addTick(value, localized(label));
    scale_->axis()->setTicker(ticks);
    scale_->setLabel(localized(scale.title));
    shown_ = scale;
    replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace nanscope
