#pragma once
// Runs a forward pass in the chosen precision. On CUDA, fp16 and bf16 use LibTorch's autocast;
// on the CPU, bf16 uses CPU autocast and fp16 is emulated: the model rounds each observed layer
// output through half (roundThroughHalf), so values past 65504 become Inf as on a GPU, and
// autograd rounds the gradients flowing back through those outputs as well.
#include "nanscope/controls.h"

#include <ATen/core/Tensor.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include <string>

namespace nanscope {

// True where fp16 is emulated by rounding (the CPU): LibTorch's CPU autocast has no fp16.
bool emulatesHalf(Precision p, const std::string &device);

// x rounded to fp16 and back to its own dtype; differentiable (the gradient is rounded too).
at::Tensor roundThroughHalf(const at::Tensor &x);

class AutocastScope {
public:
    AutocastScope(Precision p, const std::string &device);
    ~AutocastScope();
    AutocastScope(const AutocastScope &) = delete;
    AutocastScope &operator=(const AutocastScope &) = delete;

    bool active() const { return active_; }

private:
    c10::DeviceType type_ = c10::DeviceType::CPU;
    bool active_ = false;
    bool previousEnabled_ = false;
    at::ScalarType previousDtype_ = at::kFloat;
};

}  // namespace nanscope
