#include "run/nan_map_data.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nanscope {

const char *mapKindName(MapKind kind)
{
    switch (kind) {
    case MapKind::Forward: return "forward";
    case MapKind::Gradient: return "backward";
    case MapKind::Parameters: return "parameters";
    case MapKind::ParameterGradients: return "parameter gradients";
    case MapKind::Fp16Headroom: return "fp16 headroom";
    }
    return "forward";
}

namespace {

MapCell cellOf(const TensorHealth &h, int step)
{
    MapCell c;
    c.present = h.present;
    c.step = step;
    c.numel = h.numel;
    c.nan = h.nan;
    c.posInf = h.posInf;
    c.negInf = h.negInf;
    c.absMax = std::isfinite(h.absMax) ? h.absMax : 0.0;
    return c;
}

// The worse of two cells of one row; on a tie the earlier one stays, so the first bad step shows.
// The largest magnitude is kept from both, for the headroom view.
MapCell worse(const MapCell &earlier, const MapCell &later)
{
    if (!earlier.present)
        return later;
    if (!later.present)
        return earlier;
    MapCell out = later.fraction() > earlier.fraction() ? later : earlier;
    out.absMax = std::max(earlier.absMax, later.absMax);
    return out;
}

}  // namespace

double mapColourValue(const MapCell &cell, MapKind kind)
{
    if (!cell.present)
        return std::numeric_limits<double>::quiet_NaN();
    if (kind == MapKind::Fp16Headroom)
        return cell.nonFinite() > 0 ? 1.0 : std::min(1.0, fp16Headroom(cell.absMax));
    if (cell.nonFinite() == 0)
        return 0.0;
    return 0.2 + 0.8 * cell.fraction();
}

NanMapData::NanMapData(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 2)) {}

void NanMapData::reset(int layerCount)
{
    layers_ = std::max(0, layerCount);
    width_ = 1;
    columns_.clear();
}

void NanMapData::append(const StepRecord &r)
{
    if (layers_ == 0)
        return;
    if (columns_.empty() || columns_.back().count >= width_) {
        Column c;
        c.firstStep = r.step;
        c.cells.resize(std::size_t(kStoredMapKinds * layers_));
        columns_.push_back(std::move(c));
    }
    Column &col = columns_.back();
    col.lastStep = r.step;
    ++col.count;
    const int n = std::min<int>(layers_, int(r.layers.size()));
    for (int l = 0; l < n; ++l) {
        const LayerHealth &h = r.layers[std::size_t(l)];
        const TensorHealth *parts[kStoredMapKinds] = {&h.forward, &h.grad, &h.params, &h.paramGrads};
        for (int k = 0; k < kStoredMapKinds; ++k) {
            MapCell &slot = col.cells[std::size_t(k * layers_ + l)];
            slot = worse(slot, cellOf(*parts[k], r.step));
        }
    }
    if (columns_.size() > capacity_)
        halve();
}

void NanMapData::halve()
{
    std::size_t out = 0;
    for (std::size_t i = 0; i < columns_.size(); i += 2, ++out) {
        Column merged = std::move(columns_[i]);
        if (i + 1 < columns_.size()) {
            const Column &later = columns_[i + 1];
            for (std::size_t j = 0; j < merged.cells.size(); ++j)
                merged.cells[j] = worse(merged.cells[j], later.cells[j]);
            merged.lastStep = later.lastStep;
            merged.count += later.count;
        }
        columns_[out] = std::move(merged);
    }
    columns_.resize(out);
    width_ *= 2;
}

const MapCell &NanMapData::cell(MapKind kind, int column, int layer) const
{
    const int stored = kind == MapKind::Fp16Headroom ? int(MapKind::Forward) : int(kind);
    return columns_[std::size_t(column)].cells[std::size_t(stored * layers_ + layer)];
}

int NanMapData::columnOfStep(int step) const
{
    // Steps only grow within a run (a retried step repeats its number), so columns are sorted.
    auto it =
        std::lower_bound(columns_.begin(), columns_.end(), step, [](const Column &c, int s) { return c.lastStep < s; });
    if (it == columns_.end() || it->firstStep > step)
        return -1;
    return int(it - columns_.begin());
}

}  // namespace nanscope
