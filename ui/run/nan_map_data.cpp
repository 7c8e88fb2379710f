#include "run/nan_map_data.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nanscope {

double mapColourValue(const MapCell &cell)
{
    if (!cell.present)
        return std::numeric_limits<double>::quiet_NaN();
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

NanMapData::Column &NanMapData::columnFor(int firstStep, int steps)
{
    while (width_ < steps)
        halve();
    if (columns_.empty() || columns_.back().count + steps > width_) {
        Column c;
        c.firstStep = firstStep;
        c.cells.resize(std::size_t(kMapKindCount * layers_));
        c.updateRatios.assign(std::size_t(layers_), std::numeric_limits<double>::quiet_NaN());
        columns_.push_back(std::move(c));
    }
    return columns_.back();
}

void NanMapData::append(const StepRecord &r)
{
    if (layers_ == 0)
        return;
    Column &col = columnFor(r.step, 1);
    col.lastStep = r.step;
    ++col.count;
    col.withoutDetail += r.layerDetail == LayerDetail::None;
    col.detail = r.layerDetail;
    const int n = std::min<int>(layers_, int(r.layers.size()));
    for (int l = 0; l < n; ++l) {
        const auto parts = healthKinds(r.layers[std::size_t(l)]);
        for (int k = 0; k < kMapKindCount; ++k)
            col.cells[std::size_t(k * layers_ + l)].fold(MapCell::of(*parts[std::size_t(k)], r.step));
        double &ratio = col.updateRatios[std::size_t(l)];
        ratio = largestUpdateRatio(ratio, r.layers[std::size_t(l)].updateRatio);
    }
    if (columns_.size() > capacity_)
        halve();
}

void NanMapData::appendChunk(const StepChunk &chunk)
{
    if (layers_ == 0 || chunk.tally.steps == 0)
        return;
    Column &col = columnFor(chunk.firstStep, chunk.tally.steps);
    col.lastStep = chunk.lastStep;
    col.count += chunk.tally.steps;
    col.fromChunks += chunk.tally.steps;
    const int n = std::min<int>(layers_, int(chunk.layers.size()));
    for (int l = 0; l < n; ++l) {
        const StepChunk::LayerPart &part = chunk.layers[std::size_t(l)];
        for (int k = 0; k < kMapKindCount; ++k)
            col.cells[std::size_t(k * layers_ + l)].fold(part.cells[std::size_t(k)]);
        col.updateRatios[std::size_t(l)] = largestUpdateRatio(col.updateRatios[std::size_t(l)], part.updateRatio);
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
                merged.cells[j].fold(later.cells[j]);
            for (std::size_t j = 0; j < merged.updateRatios.size(); ++j)
                merged.updateRatios[j] = largestUpdateRatio(merged.updateRatios[j], later.updateRatios[j]);
            merged.lastStep = later.lastStep;
            merged.count += later.count;
            merged.withoutDetail += later.withoutDetail;
            merged.fromChunks += later.fromChunks;
        }
        columns_[out] = std::move(merged);
    }
    columns_.resize(out);
    width_ *= 2;
}

const MapCell &NanMapData::cell(MapKind kind, int column, int layer) const
{
    return columns_[std::size_t(column)].cells[std::size_t(int(kind) * layers_ + layer)];
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

std::vector<std::pair<double, int>> roundStepTicks(const NanMapData &data, int maxTicks)
{
    std::vector<std::pair<double, int>> ticks;
    const int columns = data.columnCount();
    if (columns == 0 || maxTicks < 1)
        return ticks;
    const int first = data.firstStep(0), last = data.lastStep(columns - 1);
    // The smallest round interval that gives at most maxTicks ticks.
    const double raw = double(last - first + 1) / maxTicks;
    long long interval = 1;
    for (long long scale = 1; interval < raw; scale *= 10)
        for (long long m : {1, 2, 5})
            if ((interval = m * scale) >= raw)
                break;
    for (long long t = (first + interval - 1) / interval * interval; t <= last; t += interval) {
        const int c = data.columnOfStep(int(t));
        if (c < 0)
            continue;
        const int span = data.lastStep(c) - data.firstStep(c) + 1;
        ticks.emplace_back(c - 0.5 + (double(t - data.firstStep(c)) + 0.5) / span, int(t));
    }
    return ticks;
}

}  // namespace nanscope
