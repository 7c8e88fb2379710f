#pragma once
// Naming where a non-finite value was born in a step, from the per-layer map alone.
#include "nanscope/records.h"

#include <vector>

namespace nanscope {

struct OriginInputs {
    const StepRecord &record;
    const std::vector<Layer> &layers;
    const std::vector<int> &forwardOrder;  // layer ids in the order the forward pass observed them
    bool previousStepParamsFinite = true;  // false: the parameters were already bad before
};

Origin findOrigin(const OriginInputs &in);

// Plain-language sentence for an origin (op names filled in later are included).
std::string explainOrigin(const Origin &o, const StepRecord &record);

}  // namespace nanscope
