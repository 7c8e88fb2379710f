#pragma once
// The layer x step NaN map's data, bounded like DecimatedSeries: columns are step buckets that
// merge pairwise when they pass the capacity. A merged cell keeps its worst step (the largest
// non-finite fraction) with that step's NaN / +Inf / -Inf counts, so no non-finite cell fades out.
#include "nanscope/health_kinds.h"
#include "nanscope/precision.h"
#include "nanscope/records.h"
#include "nanscope/step_chunk.h"

#include <array>
#include <utility>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nanscope {

// Which tensors of a layer a map cell describes: a health kind (nanscope/health_kinds.h). How a
// cell is coloured (NaN fraction, magnitude, headroom, ...) is the measure's business:
// run/map_measure.h.
using MapKind = HealthKind;
constexpr int kMapKindCount = kLayerHealthKinds;
inline const char *mapKindName(MapKind kind) { return healthKindInfo(kind).label; }

// The non-finite fraction as a colour value in 0..1, NaN (transparent) when nothing was
// observed: 0 for clean, and any non-finite value lifted to at least 0.2 so a single NaN among
// millions is still visible.
double mapColourValue(const MapCell &cell);

class NanMapData {
public:
    explicit NanMapData(std::size_t capacity = 1024);

    void reset(int layerCount);
    void append(const StepRecord &record);
    // A run file's chunk: its cells as one column (the width first grows to hold its steps).
    void appendChunk(const StepChunk &chunk);

    int layerCount() const { return layers_; }
    int columnCount() const { return int(columns_.size()); }
    int stepsPerColumn() const { return width_; }
    int firstStep(int column) const { return columns_[std::size_t(column)].firstStep; }
    int lastStep(int column) const { return columns_[std::size_t(column)].lastStep; }
    const MapCell &cell(MapKind kind, int column, int layer) const;
    // The largest update ratio of the column's steps for the layer; NaN: no update measured.
    double updateRatio(int column, int layer) const
    {
        return columns_[std::size_t(column)].updateRatios[std::size_t(layer)];
    }
    // Steps of the column whose run file kept no layer detail: their cells are their chunk's.
    int stepsWithoutDetail(int column) const { return columns_[std::size_t(column)].withoutDetail; }
    // Steps of the column that came as a run file's chunk (appendChunk), not one by one.
    int stepsFromChunks(int column) const { return columns_[std::size_t(column)].fromChunks; }
    // Why the run file kept the layers of a column's single step (Every: a file that keeps all).
    LayerDetail layerDetail(int column) const { return columns_[std::size_t(column)].detail; }
    // The column holding `step`, or -1.
    int columnOfStep(int step) const;

private:
    struct Column {
        int firstStep = 0;
        int lastStep = 0;
        int count = 0;
        int withoutDetail = 0;  // steps whose layers came from their chunk (LayerDetail::None)
        int fromChunks = 0;
        LayerDetail detail = LayerDetail::Every;  // of the column's last step
        std::vector<MapCell> cells;        // kind-major: [kind * layers + layer]
        std::vector<double> updateRatios;  // by layer
    };
    Column &columnFor(int firstStep, int steps);
    void halve();

    std::size_t capacity_;
    int layers_ = 0;
    int width_ = 1;
    std::vector<Column> columns_;
};

// Step-axis ticks at round steps (multiples of 1, 2 or 5 x 10^k, at most `maxTicks`), each at its
// position among the columns: column c covers keys c - 0.5 .. c + 0.5 for its steps. Pairs of
// (key, step).
std::vector<std::pair<double, int>> roundStepTicks(const NanMapData &data, int maxTicks = 8);

}  // namespace nanscope
