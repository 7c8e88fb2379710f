#pragma once
// The benchmark's models: "mlp" (the StableModel), "cnn" (a small CNN), "deep" (30 Linear + ReLU),
// each with 512 random samples, seeded alike every time.
#include "scenarios/scenario_setup.h"

#include <string>

namespace nanscope {

ScenarioSetup benchSetup(const std::string &model);

}  // namespace nanscope
