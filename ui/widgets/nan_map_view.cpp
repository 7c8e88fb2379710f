#include "widgets/nan_map_view.h"

#include "run/run_store.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <cmath>
#include <limits>

namespace nanscope {

namespace {

QCPColorGradient gradientFor(MapKind kind)
{
    QCPColorGradient g;
    g.clearColorStops();
    if (kind == MapKind::Fp16Headroom) {
        g.setColorStopAt(0.0, QColor(200, 230, 200));
        g.setColorStopAt(0.5, QColor(255, 220, 90));
        g.setColorStopAt(0.99, QColor(230, 60, 30));
        g.setColorStopAt(1.0, QColor(120, 0, 0));
    } else {
        g.setColorStopAt(0.0, QColor(235, 235, 235));
        g.setColorStopAt(0.19, QColor(235, 235, 235));
        g.setColorStopAt(0.2, QColor(255, 170, 60));
        g.setColorStopAt(1.0, QColor(170, 0, 0));
    }
    g.setNanHandling(QCPColorGradient::nhTransparent);
    return g;
}

}  // namespace

NanMapView::NanMapView(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *bar = new QHBoxLayout;
    kindBox_ = new QComboBox;
    for (int k = 0; k < kMapKindCount; ++k)
        kindBox_->addItem(tr(mapKindName(MapKind(k))), k);
    kindBox_->setToolTip(tr("Which tensors the map shows: layer outputs, the gradients flowing into them, "
                            "the layers' parameters, or the parameters' gradients"));
    legend_ = new QLabel(tr("grey: all finite · orange → red: fraction of NaN/Inf · empty: nothing observed"));
    legend_->setWordWrap(true);
    bar->addWidget(new QLabel(tr("NaN map of")));
    bar->addWidget(kindBox_);
    bar->addWidget(legend_, 1);
    layout->addLayout(bar);

    plot_ = new QCustomPlot;
    plot_->setMinimumHeight(140);
    plot_->xAxis->setLabel(tr("step"));
    plot_->yAxis->setRangeReversed(true);  // the first layer on top, as in the layer tree
    plot_->yAxis->setTickLength(0, 0);
    plot_->yAxis->setSubTicks(false);
    plot_->xAxis->grid()->setVisible(false);
    plot_->yAxis->grid()->setVisible(false);
    map_ = new QCPColorMap(plot_->xAxis, plot_->yAxis);
    map_->setGradient(gradientFor(kind_));
    map_->setDataRange(QCPRange(0, 1));
    map_->setInterpolate(false);
    outline_ = new QCPItemRect(plot_);
    outline_->setPen(QPen(Qt::black, 2));
    outline_->setBrush(Qt::NoBrush);
    outline_->setVisible(false);
    layout->addWidget(plot_, 1);

    plot_->setMouseTracking(true);
    plot_->installEventFilter(this);
    connect(plot_, &QCustomPlot::mouseRelease, this, [this](QMouseEvent *e) {
        int layer, column;
        if (e->button() == Qt::LeftButton && cellAt(e->position(), &layer, &column))
            Q_EMIT cellClicked(layer, store_->map().firstStep(column));
    });
    connect(kindBox_, &QComboBox::currentIndexChanged, this, [this] {
        kind_ = MapKind(kindBox_->currentData().toInt());
        map_->setGradient(gradientFor(kind_));
        legend_->setText(kind_ == MapKind::Fp16Headroom
                             ? tr("green → red: largest output / 65504 (fp16's largest value) · dark red: overflowed")
                             : tr("grey: all finite · orange → red: fraction of NaN/Inf · empty: nothing observed"));
        redraw();
    });
}

void NanMapView::clear()
{
    store_ = nullptr;
    map_->data()->clear();
    outline_->setVisible(false);
    for (QCPItemRect *w : warningItems_)
        plot_->removeItem(w);
    warningItems_.clear();
    originLayer_ = originStep_ = -1;
    tickedLayers_ = -1;
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void NanMapView::refresh(const RunStore &store)
{
    store_ = &store;
    redraw();
}

void NanMapView::setKind(MapKind kind) { kindBox_->setCurrentIndex(kindBox_->findData(int(kind))); }

void NanMapView::setLayerTicks()
{
    const auto &layers = store_->layers();
    if (tickedLayers_ == int(layers.size()))
        return;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (const Layer &l : layers)
        ticker->addTick(l.id, l.path.empty() ? tr("(model)") : QString::fromStdString(l.path));
    plot_->yAxis->setTicker(ticker);
    tickedLayers_ = int(layers.size());
}

// Columns sit at integer keys 0..n-1 (a decimated column spans several steps); the step axis
// ticks sit at round steps, inside the columns that hold them.
void NanMapView::redraw()
{
    if (!store_)
        return;
    const NanMapData &data = store_->map();
    const int columns = data.columnCount();
    const int rows = data.layerCount();
    if (columns == 0 || rows == 0) {
        map_->data()->clear();
        plot_->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    setLayerTicks();
    // QCPColorMap needs two cells a side to size them; a lone column or row gets an empty twin.
    const int keySize = std::max(columns, 2), valueSize = std::max(rows, 2);
    map_->data()->setSize(keySize, valueSize);
    map_->data()->setRange(QCPRange(0, keySize - 1), QCPRange(0, valueSize - 1));
    map_->data()->fill(std::numeric_limits<double>::quiet_NaN());
    for (int c = 0; c < columns; ++c)
        for (int l = 0; l < rows; ++l)
            map_->data()->setCell(c, l, mapColourValue(data.cell(kind_, c, l), kind_));

    QSharedPointer<QCPAxisTickerText> steps(new QCPAxisTickerText);
    for (const auto &[key, step] : roundStepTicks(data))
        steps->addTick(key, QString::number(step));
    plot_->xAxis->setTicker(steps);
    plot_->xAxis->setRange(-0.5, keySize - 0.5);
    plot_->yAxis->setRange(-0.5, valueSize - 0.5);

    const Origin &origin = store_->firstOrigin();
    const int originColumn = origin.valid() && origin.layer >= 0 ? data.columnOfStep(origin.step) : -1;
    outline_->setVisible(originColumn >= 0);
    originLayer_ = originColumn >= 0 ? origin.layer : -1;
    originStep_ = originColumn >= 0 ? origin.step : -1;
    if (originColumn >= 0) {
        outline_->topLeft->setCoords(originColumn - 0.5, origin.layer - 0.5);
        outline_->bottomRight->setCoords(originColumn + 0.5, origin.layer + 0.5);
    }
    showWarnings(data);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

// A few marks at most (one per layer and run): rebuilt on each redraw.
void NanMapView::showWarnings(const NanMapData &data)
{
    for (QCPItemRect *w : warningItems_)
        plot_->removeItem(w);
    warningItems_.clear();
    for (const WarningMark &w : store_->warnings()) {
        const int column = data.columnOfStep(w.step);
        if (column < 0 || w.layer < 0 || w.layer >= data.layerCount())
            continue;
        auto *mark = new QCPItemRect(plot_);
        mark->setPen(QPen(QColor(0xef, 0x6c, 0x00), 2, Qt::DashLine));  // the event log's warning colour
        mark->setBrush(Qt::NoBrush);
        mark->topLeft->setCoords(column - 0.5, w.layer - 0.5);
        mark->bottomRight->setCoords(column + 0.5, w.layer + 0.5);
        warningItems_.push_back(mark);
    }
}

int NanMapView::columnCount() const { return store_ ? store_->map().columnCount() : 0; }
int NanMapView::rowCount() const { return store_ ? store_->map().layerCount() : 0; }

double NanMapView::shownValue(int layer, int step) const
{
    const int column = store_ ? store_->map().columnOfStep(step) : -1;
    if (column < 0 || layer < 0 || layer >= rowCount())
        return std::numeric_limits<double>::quiet_NaN();
    return map_->data()->cell(column, layer);
}

bool NanMapView::originOutlined(int *layer, int *step) const
{
    if (layer)
        *layer = originLayer_;
    if (step)
        *step = originStep_;
    return outline_->visible();
}

bool NanMapView::cellAt(const QPointF &pos, int *layer, int *column) const
{
    if (!store_ || !plot_->axisRect()->rect().contains(pos.toPoint()))
        return false;
    const int c = int(std::lround(plot_->xAxis->pixelToCoord(pos.x())));
    const int l = int(std::lround(plot_->yAxis->pixelToCoord(pos.y())));
    if (c < 0 || c >= columnCount() || l < 0 || l >= rowCount())
        return false;
    *layer = l;
    *column = c;
    return true;
}

QString NanMapView::describeCell(int layer, int column) const
{
    const NanMapData &data = store_->map();
    const MapCell &cell = data.cell(kind_, column, layer);
    const Layer &l = store_->layers()[std::size_t(layer)];
    const QString path = l.path.empty() ? tr("(model)") : QString::fromStdString(l.path);
    const QString steps =
        data.firstStep(column) == data.lastStep(column)
            ? tr("step %1").arg(data.firstStep(column))
            : tr("steps %1–%2 (worst: step %3)").arg(data.firstStep(column)).arg(data.lastStep(column)).arg(cell.step);
    if (!cell.present)
        return tr("%1, %2\n%3: nothing observed").arg(path, steps, tr(mapKindName(kind_)));
    if (kind_ == MapKind::Fp16Headroom)
        return tr("%1 (%2), %3\nlargest finite output %4 = %5% of fp16's 65504%6")
            .arg(path, QString::fromStdString(l.type), steps)
            .arg(cell.absMax, 0, 'g', 4)
            .arg(100.0 * cell.absMax / kFp16Max, 0, 'f', 1)
            .arg(cell.nonFinite() > 0 ? tr("; the output held %1 NaN/Inf").arg(cell.nonFinite()) : QString());
    return tr("%1 (%2), %3\n%4: %5 NaN, %6 +Inf, %7 -Inf of %8 values")
        .arg(path, QString::fromStdString(l.type), steps, tr(mapKindName(kind_)))
        .arg(cell.nan)
        .arg(cell.posInf)
        .arg(cell.negInf)
        .arg(cell.numel);
}

bool NanMapView::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == plot_ && event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        int layer, column;
        if (cellAt(help->pos(), &layer, &column))
            QToolTip::showText(help->globalPos(), describeCell(layer, column), plot_);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace nanscope
