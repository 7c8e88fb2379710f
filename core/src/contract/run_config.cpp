// What a run starts from, and what start() accepts, checked before any thread or tensor exists.
// Messages here are read in the window too: they name settings, never command-line flags.
#include "nanscope/run_config.h"

#include "nanscope/scenario.h"

namespace nanscope {

namespace {

const ScenarioInfo *scenarioOf(const RunConfig &config)
{
    return config.usesModelFile() ? nullptr : findScenario(config.scenario);
}

}  // namespace

Controls defaultControls(const RunConfig &config)
{
    const ScenarioInfo *info = scenarioOf(config);
    return info ? info->defaults : Controls{};
}

int defaultSteps(const RunConfig &config)
{
    if (config.isRecordedLoop())
        return 0;  // its loop decided: unknown until it finished
    const ScenarioInfo *info = scenarioOf(config);
    return info ? info->defaultSteps : kModelFileDefaultSteps;
}

Controls initialControls(const RunConfig &config) { return config.controls.value_or(defaultControls(config)); }

int stepsToRun(const RunConfig &config) { return config.steps > 0 ? config.steps : defaultSteps(config); }

std::string runSource(const RunConfig &config)
{
    return config.isRecordedLoop() ? config.recordedLoop : config.usesModelFile() ? config.modelPath : config.scenario;
}

bool isKnownLoss(const std::string &name) { return name == "cross-entropy" || name == "mse" || name == "model"; }

bool isKnownInputDtype(const std::string &dtype) { return dtype == "float32" || dtype == "int64" || dtype == "bool"; }

const char *collectiveBackendName(CollectiveBackend backend)
{
    switch (backend) {
    case CollectiveBackend::Gloo: return "gloo";
    case CollectiveBackend::Nccl: return "nccl";
    case CollectiveBackend::Auto: break;
    }
    return "auto";
}

std::optional<CollectiveBackend> parseCollectiveBackend(const std::string &name)
{
    for (CollectiveBackend b : {CollectiveBackend::Auto, CollectiveBackend::Gloo, CollectiveBackend::Nccl})
        if (name == collectiveBackendName(b))
            return b;
    return std::nullopt;
}

std::string invalidRunConfigReason(const RunConfig &config)
{
    if (config.isRecordedLoop())
        return "'" + config.recordedLoop + "' is a loop another program trained and recorded: NaNScope cannot train "
               "it again (pick a scenario or a model file)";
    // A user's model file replaces the scenario; its own checks come when it is loaded.
    if (!config.usesModelFile() && !scenarioOf(config))
        return "unknown scenario '" + config.scenario + "'";
    if (config.device != "cpu" && config.device != "cuda")
        return "unknown device '" + config.device + "' (cpu or cuda)";
    if (config.steps < 0)
        return "the number of steps must be positive";
    if (config.forecastHorizon < 0)
        return "the forecast horizon is a number of steps, 0 or more (0: no forecasts)";
    if (config.usesModelFile() && !isKnownLoss(config.loss))
        return "the loss is cross-entropy, mse or model, got '" + config.loss + "'";
    for (const SideInput &in : config.sideInputs)
        if (!isKnownInputDtype(in.dtype))
            return "an input's dtype is float32, int64 or bool, got '" + in.dtype + "'";
    if (std::string reason = invalidOptimizerReason(config.optimizer); !reason.empty())
        return reason;
    const DataParallel &p = config.parallel;
    if (p.active() && (p.rank < 0 || p.rank >= p.world))
        return "rank " + std::to_string(p.rank) + " is not one of a job of " + std::to_string(p.world) + " (0 to " +
               std::to_string(p.world - 1) + ")";
    if (p.active() && (p.port <= 0 || p.port > 65535))
        return "the rendezvous port must lie in 1..65535, got " + std::to_string(p.port);
    if (config.fault.rank >= 0 && (!p.active() || config.fault.rank >= p.world))
        return "a fault on rank " + std::to_string(config.fault.rank) + " needs a job with that rank (--ranks N)";
    if (config.nanSample.active() && config.nanSample.rank < 0 && p.active())
        return "in a job, a NaN sample names its rank: --inject nan-sample@RANK:STEP";
    if (config.nanSample.rank >= 0 && (!p.active() || config.nanSample.rank >= p.world))
        return "a NaN sample on rank " + std::to_string(config.nanSample.rank) +
               " needs a job with that rank (--ranks N)";
    if (p.active() && p.backend == CollectiveBackend::Nccl && config.device != "cuda")
        return "NCCL exchanges GPU tensors: --backend nccl needs --device cuda";
    if (p.active() && (p.timeoutSeconds <= 0 || p.checkEvery < 0))
        return "the collective timeout must be positive and the parameter check every 0 or more steps";
    return initialControls(config).lossScaling.invalidReason();
}

}  // namespace nanscope
