#pragma once
// A step-series plot that shows non-finite values instead of dropping them: finite values on a
// line, each NaN/±Inf step as a red triangle along the top (on a fixed 0..1 second axis).
class QCustomPlot;
class QString;

namespace nanscope {

void setUpSeriesPlot(QCustomPlot *plot, const QString &name);
void clearSeriesPlot(QCustomPlot *plot);
void appendPoint(QCustomPlot *plot, double step, double value);
void rescaleAndReplot(QCustomPlot *plot);
// The number of finite points and of non-finite markers the plot holds.
int finitePointCount(const QCustomPlot *plot);
int nonFiniteMarkerCount(const QCustomPlot *plot);

}  // namespace nanscope
