#pragma once
// What a run trains: the model, its data, the loss and the optimizer's kind, however it was built
// (a built-in scenario, a user's model file, a benchmark model). Internal to the core.
#include "model_api/model_adapter.h"
#include "nanscope/optimizer.h"

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

namespace nanscope {

// ModelOwn: the model's (selected) output is its own scalar loss.
enum class LossKind { CrossEntropy, Mse, NegLogOfProbabilities, ModelOwn };

struct Dataset {
    at::Tensor x;                       // [N, features...]
    at::Tensor y;                       // class labels (int64) or regression targets
    std::vector<at::Tensor> side = {};  // a model file's further inputs, [N, ...] each
};

struct RunSetup {
    std::unique_ptr<ModelAdapter> model;
    Dataset data;
    LossKind loss = LossKind::CrossEntropy;
    OptimizerKind optimizer = OptimizerKind::Sgd;  // the default; RunConfig::optimizer may choose another
    int batchSize = 32;
    double loadMillis = 0;        // a model file: reading it
    double instrumentMillis = 0;  // and instrumenting its graph
    // A model file whose parameters or buffers held NaN/Inf as loaded: one line each, by name.
    std::vector<std::string> loadWarnings;
};

at::Tensor computeLoss(LossKind kind, const at::Tensor &output, const at::Tensor &target);

}  // namespace nanscope
