#pragma once
// Which tensor of a model's output NaNScope trains on: models return a tensor, a tuple (an RNN's
// (output, (h, c))), a list or a dict of heads. The first tensor, depth first, unless the user
// names a position of the tuple or list or a key of the dict (--output).
#include <ATen/core/ivalue.h>

#include <string>

namespace nanscope {

// Throws std::invalid_argument naming what the output holds when `selector` does not match it.
at::Tensor selectOutput(const c10::IValue &output, const std::string &selector);

// "a tuple (8x12x20, (1x8x20, 1x8x20))", "a dict {logits: 8x3, aux: 8x2}", "a tensor 8x10".
std::string describeOutput(const c10::IValue &output);

}  // namespace nanscope
