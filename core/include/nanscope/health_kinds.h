#pragma once
// The four kinds of a layer's health, one table for every writer and reader: the run file's
// layer_steps columns (forward_min, ...) and layer_nonfinite rows, the CSV export, JSON, the map,
// the Ranks panel and the replay's comparison all take their names and members from here.
#include "nanscope/records.h"

#include <array>
#include <string>

namespace nanscope {

enum class HealthKind { Forward, Grad, Params, ParamGrads };  // LayerHealth's order

struct HealthKindInfo {
    HealthKind kind;
    const char *id;     // "param_grads": run-file columns and rows, the CSV export, JSON keys
    const char *label;  // "parameter gradients": what people read (the map, the Ranks panel)
    TensorHealth LayerHealth::*member;
};

inline constexpr std::array<HealthKindInfo, 4> kHealthKinds{{
    {HealthKind::Forward, "forward", "forward", &LayerHealth::forward},
    {HealthKind::Grad, "grad", "backward", &LayerHealth::grad},
    {HealthKind::Params, "params", "parameters", &LayerHealth::params},
    {HealthKind::ParamGrads, "param_grads", "parameter gradients", &LayerHealth::paramGrads},
}};

inline const HealthKindInfo &healthKindInfo(HealthKind kind) { return kHealthKinds[std::size_t(kind)]; }

// The kind a run file or JSON names `id`; null for any other text.
inline const HealthKindInfo *healthKindWithId(const std::string &id)
{
    for (const HealthKindInfo &k : kHealthKinds)
        if (id == k.id)
            return &k;
    return nullptr;
}

}  // namespace nanscope
