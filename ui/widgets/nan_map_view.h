#pragma once
// The layer x step map: columns are steps (or step buckets once a long run is decimated), rows
// follow the layer tree (a collapsed module is one row showing its subtree's worst cell). A kind
// (forward, backward, parameters, parameter gradients) and a measure (NaN fraction, magnitude,
// headroom, update ratio, gradient norm: run/map_measure.h) choose what a cell shows, on a colour
// scale with ticks. The origin cell is outlined, overflow forecasts are dashed; hovering tells a
// cell's numbers; a click selects its layer (the worst of a collapsed row) and step; a click on a
// module's label opens or closes it.
//
// Rows are at least a text line high and never overprint: when they do not all fit, a scroll bar
// pages through them, and only the rows in view are coloured, so a model of 600 modules costs no
// more to draw than one of 30.
#include "run/map_measure.h"
#include "run/map_rows.h"

#include <QWidget>

class QComboBox;
class QCustomPlot;
class QCPColorMap;
class QCPItemRect;
class QLabel;
class QScrollBar;

namespace nanscope {

class MapColourScale;
class RunStore;

class NanMapView final : public QWidget {
    Q_OBJECT
public:
    explicit NanMapView(QWidget *parent = nullptr);

    void clear();
    void refresh(const RunStore &store);
    void setKind(MapKind kind);
    void setMeasure(MapMeasure measure);
    // The run's precision: the top of the magnitude scale and what headroom is measured against.
    void setPrecision(Precision precision);
    // A compared run (File › Compare with…): the Difference measure becomes a choice, and the cell
    // where the runs first part (step, layer path) is outlined under it. Null takes it away (and
    // the measure back to non-finite fraction if it was Difference); `other` must live until then.
    void setComparison(const RunStore *other, int partingStep = -1, const std::string &partingLayer = {});
    bool partingOutlined(int *layer = nullptr, int *step = nullptr) const;
    Precision precision() const { return view_.precision; }
    MapKind kind() const { return view_.kind; }
    MapMeasure measure() const { return view_.measure; }
    // Opens or closes a module's row (the layer tree does the same with its items).
    void setExpanded(int layer, bool expanded);
    void expandAll();  // as QTreeView::expandAll(), which tells no one
    bool isExpanded(int layer) const;
    // Marks the row showing `layer` and scrolls it into view.
    void selectLayer(int layer);
    int selectedLayer() const { return selectedLayer_; }

    QCustomPlot *plot() const { return plot_; }
    int columnCount() const;
    int rowCount() const { return int(rows_.size()); }
    const std::vector<MapRow> &rows() const { return rows_; }
    int firstRowShown() const { return firstRow_; }
    int rowsShown() const { return shownRows_; }
    QStringList rowLabels() const;  // of the rows in view, top to bottom
    const MeasureScale &scale() const { return scale_; }
    // The colour value shown for the row holding `layer` at `step` (NaN when not drawn or out of
    // view), and the outline's cell.
    double shownValue(int layer, int step) const;
    bool originOutlined(int *layer = nullptr, int *step = nullptr) const;
    // Overflow forecasts drawn as dashed cells (those whose step and row are in view).
    int warningMarkCount() const { return int(warningItems_.size()); }
    QString describeCell(int row, int column) const;
    // The row and column under a widget position of the plot, false outside the map.
    bool cellAt(const QPointF &pos, int *row, int *column) const;
    // The row whose label is under a widget position of the plot, or -1.
    int labelAt(const QPointF &pos) const;

Q_SIGNALS:
    void cellClicked(int layer, int step);
    // The user opened or closed a module from its label.
    void rowToggled(int layer, bool expanded);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    // The bar's and the axis' texts in the current language (nan_map_texts.cpp).
    void retranslate();
    static QString measureText(MapMeasure measure);
    void redraw();
    void rebuildRows();
    void layOutRows();
    void setRowTicks();
    void showScale(double shownMin, double shownMax);
    // The measure's look, whether the user or setMeasure() chose it.
    void showMeasure(MapMeasure measure);
    void placeOutline(const NanMapData &data);
    void showWarnings(const NanMapData &data);
    void markSelection();
    void replot();
    // The comparison's part (nan_map_compare.cpp): its layers matched to this run's by path, and
    // the outline of the cell where the runs first part.
    void syncComparison();
    void placePartingOutline(const NanMapData &data);
    int partingLayerId() const;  // this run's layer of the parting's path, -1: none

    QLabel *kindLabel_ = nullptr;
    QLabel *measureLabel_ = nullptr;
    QComboBox *kindBox_ = nullptr;
    QComboBox *measureBox_ = nullptr;
    MapColourScale *colourScale_ = nullptr;
    QCustomPlot *plot_ = nullptr;
    QScrollBar *scroll_ = nullptr;
    QCPColorMap *map_ = nullptr;
    QCPItemRect *outline_ = nullptr;
    QCPItemRect *selection_ = nullptr;
    std::vector<QCPItemRect *> warningItems_;
    const RunStore *store_ = nullptr;
    MapView view_;
    MeasureScale scale_;
    std::vector<bool> expanded_;  // by layer id; every module starts expanded, as the tree does
    std::vector<MapRow> rows_;
    bool rowsDirty_ = true;
    int firstRow_ = 0;
    int shownRows_ = 0;
    int selectedLayer_ = -1;
    int originLayer_ = -1;
    int originStep_ = -1;
    const RunStore *compared_ = nullptr;
    std::vector<int> comparedLayers_;  // by this run's layer id
    int partingStep_ = -1;
    std::string partingLayer_;
    QCPItemRect *partingOutline_ = nullptr;
    bool wantDifference_ = false;  // asked for before a comparison offered it (--map difference)
};

}  // namespace nanscope
