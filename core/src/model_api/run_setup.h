#pragma once
// What a run trains: the model, its data, the loss and the optimizer's kind, however it was built
// (a built-in scenario, a user's model file, a benchmark model). Internal to the core.
#include "model_api/model_adapter.h"
#include "nanscope/optimizer.h"

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nanscope {

// ModelOwn: the model's (selected) output is its own scalar loss.
// NegLogOfLogProbabilities: the output already holds log-probabilities. GaussianNll: the output
// is [mean, standard deviation] per sample, the loss log(std) + (y - mean)^2 / (2 std^2).
enum class LossKind { CrossEntropy, Mse, NegLogOfProbabilities, NegLogOfLogProbabilities, GaussianNll, ModelOwn };

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
    // A scenario's live fix (ScenarioFix): turns it on with a value, or off (empty), and returns
    // the loss to take from now on. Empty for a run without a fix that acts at the next step.
    std::function<LossKind(std::optional<double>)> applyFix;
};

at::Tensor computeLoss(LossKind kind, const at::Tensor &output, const at::Tensor &target);

}  // namespace nanscope
