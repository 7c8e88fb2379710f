#pragma once
// What a cell of the map shows, as plain functions the view and the tests share. The map has a
// kind (which tensors: forward, backward, parameters, parameter gradients) and a measure:
// - NonFinite: the fraction of NaN/Inf values (0 clean, lifted to at least 0.2 when any);
// - Magnitude: log10 of the largest finite |value|, on a scale whose top is the run precision's
//   largest value (a non-finite cell sits at the top);
// - Headroom: log10(absmax / the precision's largest value): 0 at overflow, -3 three decades away;
// - UpdateRatio: log10 of the layer's |dw| / |w| for the step (per layer, whatever the kind);
// - GradNorm: log10 of the L2 norm of the layer's parameter gradients (per layer);
// - Difference: against a compared run (File › Compare with…), log10 of the relative difference
//   of the cell's L2 norm: identical cells at the bottom (grey), a cell finite in one run and not
//   in the other at the top (red).
#include "run/nan_map_data.h"

#include "nanscope/controls.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nanscope {

enum class MapMeasure { NonFinite, Magnitude, Headroom, UpdateRatio, GradNorm, Difference };
constexpr int kMapMeasureCount = 6;
const char *mapMeasureName(MapMeasure measure);  // English; NanMapView::measureText translates it
// "nonfinite", "magnitude", "headroom", "update-ratio", "grad-norm": as the command line spells them.
const char *mapMeasureId(MapMeasure measure);
std::optional<MapMeasure> parseMapMeasure(const std::string &id);
// "nonfinite, magnitude, ... or difference": every id, for a message or a help text.
std::string mapMeasureIdList();
// Update ratio and gradient norm are one value per layer: the kind does not apply.
bool measureUsesKind(MapMeasure measure);

struct MapView {
    MapKind kind = MapKind::Forward;
    MapMeasure measure = MapMeasure::NonFinite;
    Precision precision = Precision::FP32;
    // What Difference compares with: the compared run's map and, by this run's layer id, the id of
    // its layer of the same path (-1: none). Null without a comparison.
    const NanMapData *compared = nullptr;
    const std::vector<int> *comparedLayers = nullptr;
};

// The compared run's cell for this run's `layer` at the column holding the same steps; null when
// there is none (no comparison, a layer it lacks, steps it did not run).
const MapCell *comparedCell(const NanMapData &data, const MapView &view, int column, int layer);
// The relative difference of two cells' norms (0: identical), 1 when their NaN/Inf counts differ.
double relativeDifference(const MapCell &a, const MapCell &b);

// The colour value of one layer's cell in a column; NaN when there is nothing to show. All-zero
// values (log of 0) take kZeroValue, a non-finite update ratio or gradient norm kNonFiniteValue:
// both lie beyond any scale's range, so they take its end colours.
constexpr double kZeroValue = -45.0;  // below fp32's smallest subnormal, 1.4e-45
constexpr double kNonFiniteValue = 400.0;
double mapValue(const NanMapData &data, const MapView &view, int column, int layer);

// The colour scale of a measure over the values shown: its range and ticks (value, label), the
// precision's largest value marked at the top of the magnitude scale ("fp16 max").
struct MeasureScale {
    double lower = 0.0;
    double upper = 1.0;
    std::vector<std::pair<double, std::string>> ticks;
    std::string title;
};
MeasureScale measureScale(const MapView &view, double shownMin, double shownMax);

// A power of ten as a tick label: "1", "1e-3", "1e+12".
std::string decadeLabel(int exponent);

}  // namespace nanscope
