#include "run/map_rows.h"

#include <cmath>

namespace nanscope {

std::vector<int> subtreeEnds(const std::vector<Layer> &layers)
{
    // Preorder: a layer's subtree ends where the next layer that is not its descendant begins.
    std::vector<int> ends(layers.size());
    for (std::size_t i = layers.size(); i-- > 0;) {
        ends[i] = int(i);
        for (std::size_t j = i + 1; j < layers.size(); ++j) {
            int p = layers[j].parent;
            while (p > int(i))
                p = layers[std::size_t(p)].parent;
            if (p != int(i))
                break;
            ends[i] = ends[j];
            j = std::size_t(ends[j]);  // skip the child's own subtree
        }
    }
    return ends;
}

std::vector<MapRow> visibleRows(const std::vector<Layer> &layers, const std::vector<bool> &expanded)
{
    const std::vector<int> ends = subtreeEnds(layers);
    const auto isExpanded = [&expanded](int id) {
        return std::size_t(id) >= expanded.size() || expanded[std::size_t(id)];
    };
    std::vector<int> depth(layers.size(), 0);
    std::vector<MapRow> rows;
    for (std::size_t i = 0; i < layers.size();) {
        const int parent = layers[i].parent;
        depth[i] = parent >= 0 && std::size_t(parent) < i ? depth[std::size_t(parent)] + 1 : 0;
        MapRow row;
        row.layer = int(i);
        row.depth = depth[i];
        row.hasChildren = ends[i] > int(i);
        row.collapsed = row.hasChildren && !isExpanded(int(i));
        row.lastMember = row.collapsed ? ends[i] : int(i);
        rows.push_back(row);
        i = std::size_t(row.lastMember) + 1;  // a collapsed subtree is this one row
    }
    return rows;
}

int rowOfLayer(const std::vector<MapRow> &rows, int layer)
{
    for (std::size_t r = 0; r < rows.size(); ++r)
        if (rows[r].holds(layer))
            return int(r);
    return -1;
}

int worstMember(const NanMapData &data, const MapView &view, const MapRow &row, int column, double *value)
{
    int worst = -1;
    double best = std::nan("");
    for (int l = row.layer; l <= row.lastMember && l < data.layerCount(); ++l) {
        const double v = mapValue(data, view, column, l);
        if (!std::isnan(v) && (worst < 0 || v > best)) {
            worst = l;
            best = v;
        }
    }
    if (value)
        *value = best;
    return worst;
}

}  // namespace nanscope
