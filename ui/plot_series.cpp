#include "plot_series.h"

#include <qcustomplot.h>

#include <cmath>

namespace nanscope {

void setUpSeriesPlot(QCustomPlot *plot, const QString &name)
{
    QCPGraph *values = plot->addGraph();
    values->setName(name);
    values->setPen(QPen(QColor(31, 119, 180), 1.5));
    QCPGraph *markers = plot->addGraph(plot->xAxis, plot->yAxis2);
    markers->setName(QObject::tr("non-finite"));
    markers->setLineStyle(QCPGraph::lsNone);
    markers->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssTriangleInverted, Qt::red, Qt::red, 9));
    plot->yAxis2->setRange(0, 1);
    plot->yAxis2->setVisible(false);
    plot->xAxis->setLabel(QObject::tr("step"));
    plot->yAxis->setLabel(name);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->legend->setVisible(true);
}

void clearSeriesPlot(QCustomPlot *plot)
{
    plot->graph(0)->data()->clear();
    plot->graph(1)->data()->clear();
    plot->replot(QCustomPlot::rpQueuedReplot);
}

void appendPoint(QCustomPlot *plot, double step, double value)
{
    if (std::isfinite(value))
        plot->graph(0)->addData(step, value);
    else
        plot->graph(1)->addData(step, 0.95);
}

void rescaleAndReplot(QCustomPlot *plot)
{
    bool found = false;
    const QCPRange keys0 = plot->graph(0)->data()->keyRange(found);
    bool found1 = false;
    const QCPRange keys1 = plot->graph(1)->data()->keyRange(found1);
    if (found || found1) {
        QCPRange keys = found ? keys0 : keys1;
        if (found && found1)
            keys.expand(keys1);
        plot->xAxis->setRange(keys.lower, std::max(keys.upper, keys.lower + 1));
    }
    if (found)
        plot->graph(0)->rescaleValueAxis(false, true);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

int finitePointCount(const QCustomPlot *plot) { return plot->graph(0)->dataCount(); }
int nonFiniteMarkerCount(const QCustomPlot *plot) { return plot->graph(1)->dataCount(); }

}  // namespace nanscope
