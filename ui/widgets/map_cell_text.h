#pragma once
// What hovering a map cell says: the layer (for a closed module, its worst member), the step or
// steps the cell covers, and the measure's numbers ("fc2 (Linear), step 8 / forward: 32 NaN, ...").
#include "run/map_measure.h"
#include "run/map_rows.h"

#include <QString>

#include <vector>

namespace nanscope {

// "forward", "backward", "parameters", "parameter gradients", in the current language.
QString mapKindText(MapKind kind);

QString describeMapCell(const NanMapData &data, const std::vector<Layer> &layers, const MapView &view,
                        const MapRow &row, int column);

}  // namespace nanscope
