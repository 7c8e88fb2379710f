#pragma once
// A run on a user's TorchScript file: the instrumented model, its data (synthetic from an input
// shape, or tensors from files) and its loss. Every mistake the user can make with the data gets
// a one-line message saying what was expected, not a LibTorch trace.
#include "nanscope/run_config.h"
#include "model_api/run_setup.h"

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace nanscope {

class TorchScriptModel;

// Throws ModelFileError for the file, std::invalid_argument for data, shapes and options. With
// `given` data (a replay's batch) the configuration's data and targets are not read.
RunSetup buildModelSetup(const RunConfig &config, const Dataset *given = nullptr);

// Runs the model once on `x` (and its further inputs) without gradients, in eval mode, and returns
// the output `selector` picks (model_output.h); a model that rejects `x` gives a message naming
// the shape it was given and, where the first weighted layer tells, the shape it expects.
at::Tensor outputForInput(TorchScriptModel &model, const at::Tensor &x, const std::vector<at::Tensor> &side = {},
                          const std::string &selector = {});

LossKind parseLoss(const std::string &name);

// "8x3x64x64"
std::string shapeText(at::IntArrayRef shape);

}  // namespace nanscope
