#pragma once
// The layer x step NaN map's data, bounded like DecimatedSeries: columns are step buckets that
// merge pairwise when they pass the capacity. A merged cell keeps its worst step (the largest
// non-finite fraction) with that step's NaN / +Inf / -Inf counts, so no non-finite cell fades out.
#include "nanscope/records.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nanscope {

enum class MapKind { Forward, Gradient, Parameters, ParameterGradients };
constexpr int kMapKindCount = 4;
const char *mapKindName(MapKind kind);

struct MapCell {
    bool present = false;  // something was observed (a layer with no parameters has none)
    int step = -1;         // the step these counts come from
    std::int64_t numel = 0;
    std::int64_t nan = 0;
    std::int64_t posInf = 0;
    std::int64_t negInf = 0;

    std::int64_t nonFinite() const { return nan + posInf + negInf; }
    double fraction() const { return numel > 0 ? double(nonFinite()) / double(numel) : 0.0; }
};

// The colour value of a cell: 0 for clean, and any non-finite value lifted to at least 0.2 so a
// single NaN among millions is still visible; NaN (transparent) when nothing was observed.
double mapColourValue(const MapCell &cell);

class NanMapData {
public:
    explicit NanMapData(std::size_t capacity = 1024);

    void reset(int layerCount);
    void append(const StepRecord &record);

    int layerCount() const { return layers_; }
    int columnCount() const { return int(columns_.size()); }
    int stepsPerColumn() const { return width_; }
    int firstStep(int column) const { return columns_[std::size_t(column)].firstStep; }
    int lastStep(int column) const { return columns_[std::size_t(column)].lastStep; }
    const MapCell &cell(MapKind kind, int column, int layer) const;
    // The column holding `step`, or -1.
    int columnOfStep(int step) const;

private:
    struct Column {
        int firstStep = 0;
        int lastStep = 0;
        int count = 0;
        std::vector<MapCell> cells;  // kind-major: [kind * layers + layer]
    };
    void halve();

    std::size_t capacity_;
    int layers_ = 0;
    int width_ = 1;
    std::vector<Column> columns_;
};

}  // namespace nanscope
