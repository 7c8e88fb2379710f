#pragma once
// Naming where a non-finite value was born in a step, from the per-layer map alone.
#include "nanscope/records.h"
#include "rules/code_origin.h"

#include <vector>

namespace nanscope {

// One call of a layer in a step, in the order calls ended (a container's after its children's).
struct LayerCall {
    int layer = -1;
    bool inputFinite = true;
    bool outputNonFinite = false;
    int fromCall = -1;             // the call whose output was this call's input; -1: none (the batch, code)
    bool outputGradFinite = true;  // the gradient into its output (true when none was seen)
};

// A gradient into a call's output, in the order backward ran.
struct BackwardCall {
    int call = -1;  // index into the step's calls
    bool nonFinite = false;
};

struct OriginInputs {
    const StepRecord &record;
    const std::vector<Layer> &layers;
    const std::vector<int> &forwardOrder;  // layer ids in the order the forward pass observed them
    bool previousStepParamsFinite = true;  // false: the parameters were already bad before
    // Each call on its own, where the probe kept them: the forward origin is then the first call
    // whose inputs were finite and whose output was not (a layer's calls merged in the map would
    // hide the call of a cell in a loop that made the value).
    const std::vector<LayerCall> *calls = nullptr;
    // With the calls, the gradients into their outputs as backward ran: the backward origin is then
    // the call that took the first non-finite one's tensor as its input (its backward made it), so
    // a cell in a loop is named with its call there too.
    const std::vector<BackwardCall> *backward = nullptr;
};

Origin findOrigin(const OriginInputs &in);

// The op-level tier found the origin in the model's own code: name its module (the root for
// top-level code), op (forward only: in backward the autograd node stays) and line.
void applyCodeOrigin(Origin &o, const CodeOrigin &code, const std::vector<Layer> &layers, bool forward);

// Plain-language sentence for an origin (op names filled in later are included).
std::string explainOrigin(const Origin &o, const StepRecord &record);

}  // namespace nanscope
