#pragma once
// The colour scale above the layer x step map: a measure's gradient (grey then orange to dark red
// for the NaN share; cool to hot for magnitudes, dark red where they overflowed), its range and
// ticks ("finite", "fp16 max"), and its title. The map colours its cells with the same gradient.
#include "run/map_measure.h"

#include <qcustomplot.h>

namespace nanscope {

class MapColourScale final : public QCustomPlot {
    Q_OBJECT
public:
    explicit MapColourScale(QWidget *parent = nullptr);

    static QCPColorGradient gradientFor(MapMeasure measure);

    void setMeasure(MapMeasure measure);
    void showScale(const MeasureScale &scale);
    // The scale's title and tick labels as shown, in the current language.
    QString label() const;

protected:
    void changeEvent(QEvent *event) override;

private:
    // One of the run data's English texts ("fp16 max") in the current language; a number as it is.
    static QString localized(const std::string &english);

    QCPColorScale *scale_ = nullptr;
    MeasureScale shown_;
};

}  // namespace nanscope
