#pragma once
// The layer x step NaN map: rows are layers in model order, columns steps (or step buckets once a
// long run is decimated); the colour is the fraction of non-finite values. Forward, backward,
// parameters or parameter gradients are selectable; the origin cell is outlined; hovering shows
// the layer, step and NaN / +Inf / -Inf counts; a click selects that layer and step.
#include "run/nan_map_data.h"

#include <QWidget>

class QComboBox;
class QCustomPlot;
class QCPColorMap;
class QCPItemRect;
class QLabel;

namespace nanscope {

class RunStore;

class NanMapView final : public QWidget {
    Q_OBJECT
public:
    explicit NanMapView(QWidget *parent = nullptr);

    void clear();
    void refresh(const RunStore &store);
    void setKind(MapKind kind);
    MapKind kind() const { return kind_; }

    QCustomPlot *plot() const { return plot_; }
    int columnCount() const;
    int rowCount() const;
    // The colour value shown for `layer` at `step` (NaN when not drawn), and the outline's cell.
    double shownValue(int layer, int step) const;
    bool originOutlined(int *layer = nullptr, int *step = nullptr) const;
    // Overflow forecasts drawn as dashed cells (those whose step and layer are on the map).
    int warningMarkCount() const { return int(warningItems_.size()); }
    QString describeCell(int layer, int column) const;
    // The cell under a widget position of the plot, false outside the map.
    bool cellAt(const QPointF &pos, int *layer, int *column) const;

Q_SIGNALS:
    void cellClicked(int layer, int step);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void redraw();
    void setLayerTicks();

    QComboBox *kindBox_ = nullptr;
    QLabel *legend_ = nullptr;
    QCustomPlot *plot_ = nullptr;
    QCPColorMap *map_ = nullptr;
    void showWarnings(const NanMapData &data);
    QCPItemRect *outline_ = nullptr;
    std::vector<QCPItemRect *> warningItems_;
    const RunStore *store_ = nullptr;
    MapKind kind_ = MapKind::Forward;
    int originLayer_ = -1;
    int originStep_ = -1;
    int tickedLayers_ = -1;
};

}  // namespace nanscope
