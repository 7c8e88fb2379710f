#include "widgets/nan_map_view.h"

#include "run/run_store.h"
#include "widgets/map_colour_scale.h"
#include "widgets/map_cell_text.h"
#include "widgets/map_row_labels.h"

#include "nanscope/precision.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QScrollBar>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <cmath>
#include <limits>

namespace nanscope {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A value the scale can place: not a sentinel for zero or non-finite.
bool onScale(double v) { return std::isfinite(v) && v > kZeroValue && v < kNonFiniteValue; }

}  // namespace

NanMapView::NanMapView(QWidget *parent) : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *bar = new QHBoxLayout;
    kindBox_ = new QComboBox;
    kindBox_->setObjectName(QStringLiteral("mapKind"));
    for (int k = 0; k < kMapKindCount; ++k)
        kindBox_->addItem(QString(), k);  // its texts, and every other, from retranslate()
    measureBox_ = new QComboBox;
    measureBox_->setObjectName(QStringLiteral("mapMeasure"));
    for (int m = 0; m < kMapMeasureCount; ++m)
        if (MapMeasure(m) != MapMeasure::Difference)  // offered while a run is compared
            measureBox_->addItem(QString(), m);
    colourScale_ = new MapColourScale;
    kindLabel_ = new QLabel;
    measureLabel_ = new QLabel;
    bar->addWidget(kindLabel_);
    bar->addWidget(kindBox_);
    bar->addWidget(measureLabel_);
    bar->addWidget(measureBox_);
    bar->addWidget(colourScale_, 1);
    layout->addLayout(bar);

    plot_ = new QCustomPlot;
    plot_->setMinimumHeight(140);
    plot_->yAxis->setRangeReversed(true);  // the first layer on top, as in the layer tree
    plot_->yAxis->setTickLength(0, 0);
    plot_->yAxis->setSubTicks(false);
    plot_->xAxis->grid()->setVisible(false);
    plot_->yAxis->grid()->setVisible(false);
    map_ = new QCPColorMap(plot_->xAxis, plot_->yAxis);
    map_->setInterpolate(false);
    selection_ = new QCPItemRect(plot_);
    selection_->setPen(Qt::NoPen);
    selection_->setBrush(QColor(40, 110, 230, 45));
    selection_->setVisible(false);
    outline_ = new QCPItemRect(plot_);
    outline_->setPen(QPen(Qt::black, 2));
    outline_->setBrush(Qt::NoBrush);
    outline_->setVisible(false);
    partingOutline_ = new QCPItemRect(plot_);
    partingOutline_->setPen(QPen(QColor(20, 60, 200), 2, Qt::DashLine));
    partingOutline_->setBrush(Qt::NoBrush);
    partingOutline_->setVisible(false);
    scroll_ = new QScrollBar(Qt::Vertical);
    scroll_->setObjectName(QStringLiteral("mapRows"));
    scroll_->setVisible(false);
    auto *mapRow = new QHBoxLayout;
    mapRow->setSpacing(0);
    mapRow->addWidget(plot_, 1);
    mapRow->addWidget(scroll_);
    layout->addLayout(mapRow, 1);
    setMeasure(view_.measure);

    plot_->setMouseTracking(true);
    plot_->installEventFilter(this);
    connect(plot_, &QCustomPlot::mouseRelease, this, [this](QMouseEvent *e) {
        if (e->button() != Qt::LeftButton || !store_)
            return;
        int row, column;
        if (cellAt(e->position(), &row, &column)) {
            const int worst = worstMember(store_->map(), view_, rows_[std::size_t(row)], column, nullptr);
            Q_EMIT cellClicked(worst >= 0 ? worst : rows_[std::size_t(row)].layer, store_->map().firstStep(column));
        } else if (const int label = labelAt(e->position()); label >= 0 && rows_[std::size_t(label)].hasChildren) {
            const MapRow &r = rows_[std::size_t(label)];
            setExpanded(r.layer, r.collapsed);
            Q_EMIT rowToggled(r.layer, isExpanded(r.layer));
        }
    });
    connect(kindBox_, &QComboBox::currentIndexChanged, this, [this] {
        view_.kind = MapKind(kindBox_->currentData().toInt());
        redraw();
    });
    connect(measureBox_, &QComboBox::currentIndexChanged, this,
            [this] { showMeasure(MapMeasure(measureBox_->currentData().toInt())); });
    connect(scroll_, &QScrollBar::valueChanged, this, [this] { redraw(); });
    retranslate();
}

void NanMapView::clear()
{
    store_ = nullptr;
    map_->data()->clear();
    outline_->setVisible(false);
    selection_->setVisible(false);
    for (QCPItemRect *w : warningItems_)
        plot_->removeItem(w);
    warningItems_.clear();
    originLayer_ = originStep_ = selectedLayer_ = -1;
    expanded_.clear();
    rows_.clear();
    rowsDirty_ = true;
    replot();
}

void NanMapView::refresh(const RunStore &store)
{
    if (store_ != &store || store.layers().size() != expanded_.size())
        rowsDirty_ = true;
    store_ = &store;
    redraw();
}

void NanMapView::setKind(MapKind kind) { kindBox_->setCurrentIndex(kindBox_->findData(int(kind))); }

void NanMapView::setMeasure(MapMeasure measure)
{
    const int index = measureBox_->findData(int(measure));
    wantDifference_ = measure == MapMeasure::Difference;
    if (index < 0)
        return;  // Difference without a comparison: chosen once one is shown
    if (measureBox_->currentIndex() == index)
        showMeasure(measure);  // no signal for the index already current
    else
        measureBox_->setCurrentIndex(index);  // its signal shows it: one redraw, not two
}

void NanMapView::showMeasure(MapMeasure measure)
{
    view_.measure = measure;
    kindBox_->setEnabled(measureUsesKind(measure));
    map_->setGradient(MapColourScale::gradientFor(measure));
    colourScale_->setMeasure(measure);
    redraw();
}

void NanMapView::setPrecision(Precision precision)
{
    if (view_.precision == precision)
        return;
    view_.precision = precision;
    redraw();
}

void NanMapView::setExpanded(int layer, bool expanded)
{
    if (layer < 0)
        return;
    if (std::size_t(layer) >= expanded_.size())
        expanded_.resize(std::size_t(layer) + 1, true);
    if (expanded_[std::size_t(layer)] == expanded)
        return;
    expanded_[std::size_t(layer)] = expanded;
    rowsDirty_ = true;
    redraw();
}

void NanMapView::expandAll()
{
    expanded_.assign(expanded_.size(), true);
    rowsDirty_ = true;
    redraw();
}

bool NanMapView::isExpanded(int layer) const
{
    return layer < 0 || std::size_t(layer) >= expanded_.size() || expanded_[std::size_t(layer)];
}

void NanMapView::selectLayer(int layer)
{
    selectedLayer_ = layer;
    const int row = rowOfLayer(rows_, layer);
    if (row >= 0 && (row < firstRow_ || row >= firstRow_ + shownRows_))
        scroll_->setValue(row - shownRows_ / 2);  // redraws
    markSelection();
    replot();
}

void NanMapView::rebuildRows()
{
    if (!rowsDirty_ || !store_)
        return;
    expanded_.resize(store_->layers().size(), true);
    rows_ = visibleRows(store_->layers(), expanded_);
    rowsDirty_ = false;
}

// How many rows fit at a readable height, and which are in view.
void NanMapView::layOutRows()
{
    const QFontMetrics metrics(plot_->yAxis->tickLabelFont());
    const int axisHeight = plot_->axisRect()->height() > 0 ? plot_->axisRect()->height() : plot_->height() - 50;
    const int fit = std::max(1, axisHeight / minimumRowHeight(metrics));
    const int rows = int(rows_.size());
    shownRows_ = std::min(rows, fit);
    const QSignalBlocker quiet(scroll_);
    scroll_->setRange(0, std::max(0, rows - shownRows_));
    scroll_->setPageStep(std::max(1, shownRows_));
    scroll_->setVisible(rows > shownRows_);
    firstRow_ = scroll_->value();
}

void NanMapView::setRowTicks()
{
    const QFontMetrics metrics(plot_->yAxis->tickLabelFont());
    const int width = metrics.averageCharWidth() * 24;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (int r = firstRow_; r < firstRow_ + shownRows_; ++r)
        ticker->addTick(r, rowLabel(store_->layers(), rows_[std::size_t(r)], metrics, width));
    plot_->yAxis->setTicker(ticker);
    // One label width whatever rows are in view, so scrolling never shifts the map sideways.
    plot_->axisRect()->setAutoMargins(QCP::msTop | QCP::msRight | QCP::msBottom);
    plot_->axisRect()->setMargins(QMargins(width + 2 * plot_->yAxis->tickLabelPadding() + 4, 0, 0, 0));
}

// Columns sit at integer keys 0..n-1 (a decimated column spans several steps); rows at their
// index in rows_; only the rows in view are coloured.
void NanMapView::redraw()
{
    if (!store_)
        return;
    rebuildRows();
    syncComparison();
    const NanMapData &data = store_->map();
    const int columns = data.columnCount();
    if (columns == 0 || rows_.empty() || data.layerCount() == 0) {
        map_->data()->clear();
        replot();
        return;
    }
    layOutRows();
    setRowTicks();
    // QCPColorMap needs two cells a side to size them; a lone column or row gets an empty twin.
    const int keySize = std::max(columns, 2), valueSize = std::max(shownRows_, 2);
    map_->data()->setSize(keySize, valueSize);
    map_->data()->setRange(QCPRange(0, keySize - 1), QCPRange(firstRow_, firstRow_ + valueSize - 1));
    map_->data()->fill(kNaN);
    double shownMin = kNaN, shownMax = kNaN;
    for (int r = 0; r < shownRows_; ++r) {
        const MapRow &row = rows_[std::size_t(firstRow_ + r)];
        for (int c = 0; c < columns; ++c) {
            double v;
            worstMember(data, view_, row, c, &v);
            map_->data()->setCell(c, r, v);
            if (onScale(v)) {
                shownMin = std::isnan(shownMin) ? v : std::min(shownMin, v);
                shownMax = std::isnan(shownMax) ? v : std::max(shownMax, v);
            }
        }
    }
    showScale(shownMin, shownMax);

    QSharedPointer<QCPAxisTickerText> steps(new QCPAxisTickerText);
    for (const auto &[key, step] : roundStepTicks(data))
        steps->addTick(key, QString::number(step));
    plot_->xAxis->setTicker(steps);
    plot_->xAxis->setRange(-0.5, keySize - 0.5);
    plot_->yAxis->setRange(firstRow_ - 0.5, firstRow_ + shownRows_ - 0.5);
    placeOutline(data);
    placePartingOutline(data);
    showWarnings(data);
    markSelection();
    replot();
}

void NanMapView::showScale(double shownMin, double shownMax)
{
    scale_ = measureScale(view_, shownMin, shownMax);
    map_->setDataRange(QCPRange(scale_.lower, scale_.upper));
    colourScale_->showScale(scale_);
}

void NanMapView::placeOutline(const NanMapData &data)
{
    const Origin &origin = store_->firstOrigin();
    const int column = origin.valid() && origin.layer >= 0 ? data.columnOfStep(origin.step) : -1;
    const int row = column >= 0 ? rowOfLayer(rows_, origin.layer) : -1;
    const bool inView = row >= firstRow_ && row < firstRow_ + shownRows_;
    originLayer_ = column >= 0 ? origin.layer : -1;
    originStep_ = column >= 0 ? origin.step : -1;
    outline_->setVisible(column >= 0 && inView);
    if (outline_->visible()) {
        outline_->topLeft->setCoords(column - 0.5, row - 0.5);
        outline_->bottomRight->setCoords(column + 0.5, row + 0.5);
    }
}

// A few marks at most (one per layer and run): rebuilt on each redraw.
void NanMapView::showWarnings(const NanMapData &data)
{
    for (QCPItemRect *w : warningItems_)
        plot_->removeItem(w);
    warningItems_.clear();
    for (const WarningMark &w : store_->warnings()) {
        const int column = data.columnOfStep(w.step);
        const int row = rowOfLayer(rows_, w.layer);
        if (column < 0 || row < firstRow_ || row >= firstRow_ + shownRows_)
            continue;
        auto *mark = new QCPItemRect(plot_);
        mark->setPen(QPen(QColor(0xef, 0x6c, 0x00), 2, Qt::DashLine));  // the event log's warning colour
        mark->setBrush(Qt::NoBrush);
        mark->topLeft->setCoords(column - 0.5, row - 0.5);
        mark->bottomRight->setCoords(column + 0.5, row + 0.5);
        warningItems_.push_back(mark);
    }
}

void NanMapView::markSelection()
{
    const int row = rowOfLayer(rows_, selectedLayer_);
    selection_->setVisible(row >= firstRow_ && row < firstRow_ + shownRows_ && columnCount() > 0);
    if (selection_->visible()) {
        selection_->topLeft->setCoords(-0.5, row - 0.5);
        selection_->bottomRight->setCoords(std::max(columnCount(), 2) - 0.5, row + 0.5);
    }
}

void NanMapView::replot() { plot_->replot(QCustomPlot::rpQueuedReplot); }

int NanMapView::columnCount() const { return store_ ? store_->map().columnCount() : 0; }

QStringList NanMapView::rowLabels() const
{
    QStringList labels;
    const auto ticker = plot_->yAxis->ticker().dynamicCast<QCPAxisTickerText>();
    if (ticker)
        for (auto it = ticker->ticks().cbegin(); it != ticker->ticks().cend(); ++it)
            labels << it.value();
    return labels;
}

double NanMapView::shownValue(int layer, int step) const
{
    const int column = store_ ? store_->map().columnOfStep(step) : -1;
    const int row = rowOfLayer(rows_, layer);
    if (column < 0 || row < firstRow_ || row >= firstRow_ + shownRows_)
        return kNaN;
    return map_->data()->cell(column, row - firstRow_);
}

bool NanMapView::originOutlined(int *layer, int *step) const
{
    if (layer)
        *layer = originLayer_;
    if (step)
        *step = originStep_;
    return outline_->visible();
}

bool NanMapView::cellAt(const QPointF &pos, int *row, int *column) const
{
    if (!store_ || !plot_->axisRect()->rect().contains(pos.toPoint()))
        return false;
    const int c = int(std::lround(plot_->xAxis->pixelToCoord(pos.x())));
    const int r = int(std::lround(plot_->yAxis->pixelToCoord(pos.y())));
    if (c < 0 || c >= columnCount() || r < firstRow_ || r >= firstRow_ + shownRows_)
        return false;
    *row = r;
    *column = c;
    return true;
}

int NanMapView::labelAt(const QPointF &pos) const
{
    const QRect area = plot_->axisRect()->rect();
    if (!store_ || pos.x() >= area.left() || pos.y() < area.top() || pos.y() > area.bottom())
        return -1;
    const int r = int(std::lround(plot_->yAxis->pixelToCoord(pos.y())));
    return r >= firstRow_ && r < firstRow_ + shownRows_ ? r : -1;
}

QString NanMapView::describeCell(int row, int column) const
{
    return describeMapCell(store_->map(), store_->layers(), view_, rows_[std::size_t(row)], column);
}

bool NanMapView::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == plot_) {
        if (event->type() == QEvent::ToolTip) {
            auto *help = static_cast<QHelpEvent *>(event);
            int row, column;
            if (cellAt(help->pos(), &row, &column))
                QToolTip::showText(help->globalPos(), describeCell(row, column), plot_);
            else if (const int label = labelAt(help->pos()); label >= 0)
                QToolTip::showText(
                    help->globalPos(),
                    QString::fromStdString(store_->layers()[std::size_t(rows_[std::size_t(label)].layer)].path), plot_);
            else
                QToolTip::hideText();
            return true;
        }
        if (event->type() == QEvent::Wheel && scroll_->isVisible()) {
            QCoreApplication::sendEvent(scroll_, event);
            return true;
        }
        if (event->type() == QEvent::Resize)
            QMetaObject::invokeMethod(this, &NanMapView::redraw, Qt::QueuedConnection);
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace nanscope
