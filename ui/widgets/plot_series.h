#pragma once
// Step-series plots that show non-finite values instead of dropping them: finite values on a
// line (the min..max envelope of each bucket once decimated), each bucket holding NaN/±Inf as a
// red triangle along the top (on a fixed 0..1 second axis).
#include "nanscope/step_chunk.h"

#include <QColor>

#include <vector>

class QCPGraph;
class QCustomPlot;
class QString;

namespace nanscope {

class DecimatedSeries;

struct SeriesGraphs {
    QCPGraph *values = nullptr;
    QCPGraph *markers = nullptr;
};

// Axis labels and series names are the caller's, set again when the language changes.
void setUpStepPlot(QCustomPlot *plot);
// `markerHeight` in 0..1 of the plot's height keeps two series' markers apart.
SeriesGraphs addSeries(QCustomPlot *plot, const QColor &colour, double markerHeight = 0.95);
// The legend's name of the line, and of its NaN/Inf markers.
void nameSeries(const SeriesGraphs &graphs, const QString &name);
void showSeries(const SeriesGraphs &graphs, const DecimatedSeries &series);
void showSeries(const SeriesGraphs &graphs, const std::vector<SeriesBucket> &buckets);
// Fits the value axis to the finite data; the step axis is the caller's.
void fitValueAxis(QCustomPlot *plot);

// Axis labels, tick labels and the legend at `pointSize` (presentation mode).
void setPlotFontSize(QCustomPlot *plot, double pointSize);

// The number of finite points and of non-finite markers of a plot's first series.
int finitePointCount(const QCustomPlot *plot);
int nonFiniteMarkerCount(const QCustomPlot *plot);

}  // namespace nanscope
