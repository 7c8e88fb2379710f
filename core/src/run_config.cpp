// What Session::start() accepts, checked before any thread or tensor exists.
#include "nanscope/scenario.h"
#include "nanscope/session.h"

namespace nanscope {

bool isKnownLoss(const std::string &name) { return name == "cross-entropy" || name == "mse"; }

std::string invalidRunConfigReason(const RunConfig &config)
{
    // A user's model file replaces the scenario; its own checks come when it is loaded.
    const ScenarioInfo *info = config.modelPath.empty() ? findScenario(config.scenario) : nullptr;
    if (!info && config.modelPath.empty())
        return "unknown scenario '" + config.scenario + "' (see `nanscope scenarios`)";
    if (config.device != "cpu" && config.device != "cuda")
        return "unknown device '" + config.device + "' (cpu or cuda)";
    if (config.steps < 0)
        return "the number of steps must be positive";
    if (!config.modelPath.empty() && !isKnownLoss(config.loss))
        return "--loss is cross-entropy or mse, got '" + config.loss + "'";
    return config.controls.value_or(info ? info->defaults : Controls{}).lossScaling.invalidReason();
}

}  // namespace nanscope
