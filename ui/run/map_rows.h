#pragma once
// The map's rows follow the layer tree: a module whose ancestors are all expanded has a row; a
// collapsed module with children is one row for its whole subtree, whose cell is the subtree's
// worst (the largest value shown, as the NaN fraction or a magnitude is worse when larger).
// Layers come in named_modules() order, so a subtree is the contiguous run of ids after its root.
#include "run/map_measure.h"

#include "nanscope/records.h"

#include <vector>

namespace nanscope {

struct MapRow {
    int layer = -1;       // the module the row stands for
    int depth = 0;        // 0 for top-level rows
    int lastMember = -1;  // the subtree is layer..lastMember when collapsed; the row's own layer otherwise
    bool hasChildren = false;
    bool collapsed = false;  // has children and shows them aggregated

    bool holds(int id) const { return id >= layer && id <= lastMember; }
};

// The last layer id in each layer's subtree.
std::vector<int> subtreeEnds(const std::vector<Layer> &layers);
// The rows shown, top to bottom. `expanded` is by layer id (missing entries: expanded).
std::vector<MapRow> visibleRows(const std::vector<Layer> &layers, const std::vector<bool> &expanded);
// The row that shows `layer` (its own or a collapsed ancestor's), or -1.
int rowOfLayer(const std::vector<MapRow> &rows, int layer);

// The member of a row with the worst value in a column (-1 when none has a value), and that value.
int worstMember(const NanMapData &data, const MapView &view, const MapRow &row, int column, double *value);

}  // namespace nanscope
