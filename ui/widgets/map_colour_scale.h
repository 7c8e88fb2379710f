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

private:
    QCPColorScale *scale_ = nullptr;
};

}  // namespace nanscope
