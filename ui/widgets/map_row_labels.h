#pragma once
// The labels of the map's rows, laid out so they never overprint: each row at least a text line
// high, each label indented by depth and elided in the middle to one width.
#include "run/map_rows.h"

#include <QString>

class QFontMetrics;

namespace nanscope {

// Indented by depth, a marker for a collapsed (▸) or expanded (▾) module, then the module's name
// under its parent (its path less the parent's; "(model)" for the root) elided in the middle to
// fit `width` pixels.
QString rowLabel(const std::vector<Layer> &layers, const MapRow &row, const QFontMetrics &metrics, int width);
// The height a row needs so its label never touches its neighbours'.
int minimumRowHeight(const QFontMetrics &metrics);

}  // namespace nanscope
