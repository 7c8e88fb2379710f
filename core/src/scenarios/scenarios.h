#pragma once
// Building a built-in scenario's run set-up (internal to the core): the catalogue of ids and
// defaults is nanscope/scenario.h.
#include "model_api/run_setup.h"
#include "nanscope/run_config.h"
#include "probe/observed_sequential.h"

#include <memory>

namespace nanscope {

// The scenario's model, data, loss and optimizer choice; a model file's run (config.modelPath)
// loads the file instead, and takes `given` data instead of its configured data when there is
// some (a replay). Throws std::invalid_argument for an unknown id or impossible options.
RunSetup buildRunSetup(const RunConfig &config, const Dataset *given = nullptr);

// The default data of docs/scenarios.md: seeded N(0,1) inputs and labels.
Dataset randomClassification(int samples, int features, int classes);

// StableModel: Linear(100,64) BN ReLU Dropout(0.3) Linear(64,64) BN ReLU Dropout(0.3) Linear(64,10)
std::unique_ptr<ObservedSequential> stableModel(double bnEps = 1e-5);

}  // namespace nanscope
