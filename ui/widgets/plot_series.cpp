#include "widgets/plot_series.h"

#include "run/decimated_series.h"

#include <qcustomplot.h>

namespace nanscope {

void setUpStepPlot(QCustomPlot *plot)
{
    plot->yAxis2->setRange(0, 1);
    plot->yAxis2->setVisible(false);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    // Zoom and pan act on the step axis; the value axis follows the data.
    plot->axisRect()->setRangeDrag(Qt::Horizontal);
    plot->axisRect()->setRangeZoom(Qt::Horizontal);
    plot->legend->setVisible(true);
    plot->legend->setFont(QFont(plot->font().family(), qMax(7, plot->font().pointSize() - 1)));
    plot->legend->setBrush(QColor(255, 255, 255, 200));
    plot->legend->setRowSpacing(0);
    plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    plot->setNoAntialiasingOnDrag(true);
}

SeriesGraphs addSeries(QCustomPlot *plot, const QColor &colour, double markerHeight)
{
    SeriesGraphs g;
    g.values = plot->addGraph();
    g.values->setPen(QPen(colour, 1.5));
    g.markers = plot->addGraph(plot->xAxis, plot->yAxis2);
    g.markers->setLineStyle(QCPGraph::lsNone);
    g.markers->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssTriangleInverted, Qt::red, Qt::red, 9));
    g.markers->setProperty("markerHeight", markerHeight);
    g.markers->removeFromLegend();  // the red triangles explain themselves; the legend names lines
    return g;
}

void nameSeries(const SeriesGraphs &g, const QString &name)
{
    g.values->setName(name);
    g.markers->setName(QObject::tr("%1 NaN/Inf").arg(name));
}

void showSeries(const SeriesGraphs &g, const DecimatedSeries &series) { showSeries(g, series.buckets()); }

void showSeries(const SeriesGraphs &g, const std::vector<SeriesBucket> &buckets)
{
    const double height = g.markers->property("markerHeight").toDouble();
    QVector<double> keys, values, markerKeys, markerValues;
    keys.reserve(int(buckets.size()) * 2);
    values.reserve(int(buckets.size()) * 2);
    for (const SeriesBucket &b : buckets) {
        if (b.finiteCount > 0) {
            // One point per step until decimated; then the bucket's envelope as a vertical stroke.
            keys.push_back(b.firstStep);
            values.push_back(b.min);
            if (b.count > 1 && b.max != b.min) {
                keys.push_back(b.firstStep);
                values.push_back(b.max);
            }
        }
        if (b.hasNonFinite()) {
            markerKeys.push_back(b.firstNonFiniteStep);
            markerValues.push_back(height);
        }
    }
    g.values->setData(keys, values, true);
    g.markers->setData(markerKeys, markerValues, true);
}

void fitValueAxis(QCustomPlot *plot)
{
    bool any = false;
    QCPRange range;
    for (int i = 0; i < plot->graphCount(); ++i) {
        QCPGraph *graph = plot->graph(i);
        if (graph->valueAxis() != plot->yAxis)
            continue;
        bool found = false;
        const QCP::SignDomain domain =
            plot->yAxis->scaleType() == QCPAxis::stLogarithmic ? QCP::sdPositive : QCP::sdBoth;
        const QCPRange r = graph->data()->valueRange(found, domain);
        if (!found)
            continue;
        if (any)
            range.expand(r);
        else
            range = r;
        any = true;
    }
    if (!any)
        return;
    const bool log = plot->yAxis->scaleType() == QCPAxis::stLogarithmic;
    if (log) {
        plot->yAxis->setRange(range.lower / 1.5, range.upper * 1.5);
        return;
    }
    const double pad = range.size() > 0 ? range.size() * 0.05 : (range.lower == 0 ? 1 : std::abs(range.lower) * 0.1);
    plot->yAxis->setRange(range.lower - pad, range.upper + pad);
}

void setPlotFontSize(QCustomPlot *plot, double pointSize)
{
    QFont f = plot->font();
    f.setPointSizeF(pointSize);
    // Every axis of the plot: its axis rects' and its colour scales' (a scale may stand alone).
    QList<QCPAxis *> axes;
    for (QCPLayoutElement *e : plot->plotLayout()->elements(true)) {
        if (auto *rect = qobject_cast<QCPAxisRect *>(e))
            axes += rect->axes();
        else if (auto *scale = qobject_cast<QCPColorScale *>(e))
            axes << scale->axis();
    }
    for (QCPAxis *axis : axes) {
        axis->setLabelFont(f);
        axis->setTickLabelFont(f);
    }
    if (plot->legend)
        plot->legend->setFont(f);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

int finitePointCount(const QCustomPlot *plot) { return plot->graph(0)->dataCount(); }
int nonFiniteMarkerCount(const QCustomPlot *plot) { return plot->graph(1)->dataCount(); }

}  // namespace nanscope
