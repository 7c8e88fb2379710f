#pragma once
// Building a scenario's model, data, loss and optimizer choice (internal to the core).
#include "nanscope/optimizer.h"
#include "nanscope/run_config.h"
#include "model/model_adapter.h"
#include "probe/observed_sequential.h"

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

struct ScenarioSetup {
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

// Throws std::invalid_argument for an unknown id or impossible options. A model file's run takes
// `given` data instead of its configured data when there is some (a replay).
ScenarioSetup buildScenario(const RunConfig &config, const Dataset *given = nullptr);

at::Tensor computeLoss(LossKind kind, const at::Tensor &output, const at::Tensor &target);

// The default data of docs/scenarios.md: seeded N(0,1) inputs and labels.
Dataset randomClassification(int samples, int features, int classes);

// StableModel: Linear(100,64) BN ReLU Dropout(0.3) Linear(64,64) BN ReLU Dropout(0.3) Linear(64,10)
std::unique_ptr<ObservedSequential> stableModel(double bnEps = 1e-5);

}  // namespace nanscope
