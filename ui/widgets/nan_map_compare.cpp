// NanMapView's comparison with a second run: the Difference measure, offered while a run is
// compared, and the outline of the cell where the two runs first part.
#include "widgets/nan_map_view.h"

#include "run/run_store.h"

#include <QComboBox>

#include <qcustomplot.h>

#include <map>

namespace nanscope {

void NanMapView::setComparison(const RunStore *other, int partingStep, const std::string &partingLayer)
{
    compared_ = other;
    partingStep_ = other ? partingStep : -1;
    partingLayer_ = other ? partingLayer : std::string();
    comparedLayers_.clear();
    const int index = measureBox_->findData(int(MapMeasure::Difference));
    if (other && index < 0) {
        measureBox_->addItem(measureText(MapMeasure::Difference), int(MapMeasure::Difference));
        if (wantDifference_)
            setMeasure(MapMeasure::Difference);
    } else if (!other && index >= 0) {
        const bool was = view_.measure == MapMeasure::Difference;
        if (was)
            setMeasure(MapMeasure::NonFinite);
        measureBox_->removeItem(measureBox_->findData(int(MapMeasure::Difference)));
        wantDifference_ = was;  // comparing again shows the difference again
    }
    redraw();
}

void NanMapView::syncComparison()
{
    view_.compared = compared_ ? &compared_->map() : nullptr;
    view_.comparedLayers = compared_ ? &comparedLayers_ : nullptr;
    if (!compared_ || comparedLayers_.size() == store_->layers().size())
        return;
    std::map<std::string, int> byPath;
    for (const Layer &l : compared_->layers())
        byPath[l.path] = l.id;
    comparedLayers_.assign(store_->layers().size(), -1);
    for (const Layer &l : store_->layers())
        if (const auto it = byPath.find(l.path); it != byPath.end())
            comparedLayers_[std::size_t(l.id)] = it->second;
}

int NanMapView::partingLayerId() const
{
    if (store_ && partingStep_ >= 0)
        for (const Layer &l : store_->layers())
            if (l.path == partingLayer_)
                return l.id;
    return -1;
}

void NanMapView::placePartingOutline(const NanMapData &data)
{
    const int layer = partingLayerId();
    const int column = layer >= 0 ? data.columnOfStep(partingStep_) : -1;
    const int row = column >= 0 ? rowOfLayer(rows_, layer) : -1;
    partingOutline_->setVisible(view_.measure == MapMeasure::Difference && row >= firstRow_ &&
                                row < firstRow_ + shownRows_);
    if (partingOutline_->visible()) {
        partingOutline_->topLeft->setCoords(column - 0.5, row - 0.5);
        partingOutline_->bottomRight->setCoords(column + 0.5, row + 0.5);
    }
}

bool NanMapView::partingOutlined(int *layer, int *step) const
{
    if (layer)
        *layer = partingLayerId();
    if (step)
        *step = partingStep_;
    return partingOutline_->visible();
}

}  // namespace nanscope
