#pragma once
// The benchmark's models: "mlp" (the StableModel), "cnn" (a small CNN), "deep" (30 Linear + ReLU),
// each with 512 random samples, seeded alike every time.
#include "model_api/run_setup.h"

#include <string>

namespace nanscope {

RunSetup benchSetup(const std::string &model);

}  // namespace nanscope
