#pragma once
// A transient fault injected for real (RunConfig::fault): one exponent bit of one weight flipped
// for one step's computation, then put back, so that a replay of the step (without the fault)
// tells a transient failure from a deterministic one.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace nanscope {

class ModelAdapter;

// The weight a fault in `layerPath` flips: the layer's first float32 parameter with elements.
// Throws std::invalid_argument naming the layers when there is no such layer or weight.
at::Tensor faultWeight(const ModelAdapter &model, const std::string &layerPath);

struct FlippedWeight {
    at::Tensor weight;  // undefined: nothing was flipped
    std::int64_t index = -1;
    float before = 0;
    std::string text;  // "fc1.weight[3, 7]: 0.12 -> 4.1e+37 (exponent bit 30)"
};

// Flips the highest exponent bit of the weight's largest-magnitude element (a value below 2 grows
// by 2^128, one of 2 or more shrinks by as much).
FlippedWeight flipExponentBit(const at::Tensor &weight, const std::string &name);
void unflip(const FlippedWeight &flipped);

}  // namespace nanscope
