#include <algorithm>
#include "record/run_file_json.h"

#include "nanscope/run_threads.h"

#include <cmath>
#include <limits>

namespace nanscope::record {

std::string indexListText(const std::vector<std::int64_t> &v) { return v.empty() ? "" : Json(v).dump(); }

std::vector<std::int64_t> indexListFrom(const std::string &text)
{
    if (text.empty())
        return {};
    const Json j = Json::parse(text, nullptr, false);
    std::vector<std::int64_t> out;
    if (j.is_array())
        for (const auto &v : j)
            if (v.is_number_integer())
                out.push_back(v.get<std::int64_t>());
    return out;
}

Json controlsJson(const Controls &c)
{
    return Json{{"learning_rate", numberJson(c.learningRate)},
                {"clip_norm", c.clipNorm ? numberJson(*c.clipNorm) : Json()},
                {"precision", precisionName(c.precision)},
                {"loss_scaling",
                 {{"enabled", c.lossScaling.enabled},
                  {"initial_scale", numberJson(c.lossScaling.initialScale)},
                  {"growth_factor", numberJson(c.lossScaling.growthFactor)},
                  {"backoff_factor", numberJson(c.lossScaling.backoffFactor)},
                  {"growth_interval", c.lossScaling.growthInterval}}},
                {"recovery",
                 {{"quarantine_samples", c.recovery.quarantineSamples},
                  {"zero_nonfinite_grads", c.recovery.zeroNonFiniteGrads},
                  {"rollback_on_nonfinite_loss", c.recovery.rollbackOnNonFiniteLoss},
                  {"max_retries", c.recovery.maxRetries}}},
                {"pause_on_nonfinite", c.pauseOnNonFinite},
                {"fix", c.fix ? numberJson(*c.fix) : Json()}};
}

Controls controlsFrom(const Json &j)
{
    Controls c;
    if (!j.is_object())
        return c;
    c.learningRate = jsonNumber(j, "learning_rate", c.learningRate);
    if (j.contains("clip_norm") && !j["clip_norm"].is_null())
        c.clipNorm = numberFrom(j["clip_norm"]);
    c.precision = parsePrecision(jsonValue<std::string>(j, "precision", "fp32")).value_or(Precision::FP32);
    const Json ls = j.value("loss_scaling", Json::object());
    if (ls.is_object()) {
        c.lossScaling.enabled = jsonValue(ls, "enabled", c.lossScaling.enabled);
        c.lossScaling.initialScale = jsonNumber(ls, "initial_scale", c.lossScaling.initialScale);
        c.lossScaling.growthFactor = jsonNumber(ls, "growth_factor", c.lossScaling.growthFactor);
        c.lossScaling.backoffFactor = jsonNumber(ls, "backoff_factor", c.lossScaling.backoffFactor);
        c.lossScaling.growthInterval = jsonValue(ls, "growth_interval", c.lossScaling.growthInterval);
    }
    const Json r = j.value("recovery", Json::object());
    if (r.is_object()) {
        c.recovery.quarantineSamples = jsonValue(r, "quarantine_samples", false);
        c.recovery.zeroNonFiniteGrads = jsonValue(r, "zero_nonfinite_grads", false);
        c.recovery.rollbackOnNonFiniteLoss = jsonValue(r, "rollback_on_nonfinite_loss", false);
        c.recovery.maxRetries = jsonValue(r, "max_retries", c.recovery.maxRetries);
    }
    c.pauseOnNonFinite = jsonValue(j, "pause_on_nonfinite", false);
    if (j.contains("fix") && !j["fix"].is_null())  // older files have no fix
        c.fix = numberFrom(j["fix"]);
    return c;
}

namespace {

Json sideInputsJson(const std::vector<SideInput> &inputs)
{
    Json out = Json::array();
    for (const SideInput &in : inputs)
        out.push_back(Json{{"shape", in.shape}, {"dtype", in.dtype}, {"file", in.path}});
    return out;
}

std::vector<SideInput> sideInputsFrom(const Json &j)
{
    std::vector<SideInput> out;
    if (!j.is_array())
        return out;
    for (const Json &item : j) {
        if (!item.is_object())
            continue;
        SideInput in;
        in.shape = jsonValue<std::vector<std::int64_t>>(item, "shape", {});
        in.dtype = jsonValue<std::string>(item, "dtype", "float32");
        in.path = jsonValue<std::string>(item, "file", "");
        out.push_back(in);
    }
    return out;
}

Json parallelJson(const DataParallel &p)
{
    return Json{{"rank", p.rank},
                {"world_size", p.world},
                {"address", p.address},
                {"port", p.port},
                {"on_bad_rank", p.onBadRank == BadRankPolicy::Exclude ? "exclude" : "skip"},
                {"check_every", p.checkEvery},
                {"timeout_s", p.timeoutSeconds},
                {"backend", collectiveBackendName(p.backend)},
                {"local_rank", p.localRank}};
}

DataParallel parallelFrom(const Json &j)
{
    DataParallel p;
    p.rank = jsonValue(j, "rank", 0);
    p.world = jsonValue(j, "world_size", 0);
    p.address = jsonValue<std::string>(j, "address", p.address);
    p.port = jsonValue(j, "port", 0);
    p.onBadRank =
        jsonValue<std::string>(j, "on_bad_rank", "skip") == "exclude" ? BadRankPolicy::Exclude : BadRankPolicy::Skip;
    p.checkEvery = jsonValue(j, "check_every", p.checkEvery);
    p.timeoutSeconds = jsonValue(j, "timeout_s", p.timeoutSeconds);
    p.backend = parseCollectiveBackend(jsonValue<std::string>(j, "backend", "auto")).value_or(CollectiveBackend::Auto);
    p.localRank = jsonValue(j, "local_rank", p.localRank);
    return p;
}

}  // namespace

Json configJson(const RunConfig &c, const Controls &initial, int steps)
{
    return Json{
        {"scenario", c.usesModelFile() ? Json() : Json(c.scenario)},
        {"model", c.usesModelFile() ? Json(c.modelPath) : Json()},
        {"steps", steps},
        {"seed", c.seed},
        {"device", c.device},
        {"threads", kRunThreads},
        {"batch_size", c.batchSize},
        {"bn_eps", c.bnEps ? numberJson(*c.bnEps) : Json()},
        {"snapshot_every", c.snapshotEvery},
        {"snapshot_ring", c.snapshotRing},
        {"op_level_origin", c.opLevelOrigin},
        {"forecast_horizon", c.forecastHorizon},
        {"device_path_on_cpu", c.devicePathOnCpu},
        {"capsule_on_failure", c.capsuleOnFailure},
        {"capsule_steps", c.capsuleSteps},
        {"fault",
         c.fault.active() ? Json{{"step", c.fault.step}, {"layer", c.fault.layer}, {"rank", c.fault.rank}} : Json()},
        {"nan_sample", c.nanSample.active() ? Json{{"step", c.nanSample.step}, {"rank", c.nanSample.rank}} : Json()},
        {"parallel", c.parallel.active() ? parallelJson(c.parallel) : Json()},
        {"input_shape", c.inputShape},
        {"input_dtype", c.tokenIds ? "int64" : "float32"},
        {"vocab", c.vocab},
        {"inputs", c.inputsPath},
        {"side_inputs", sideInputsJson(c.sideInputs)},
        {"output", c.output},
        {"targets", c.targetsPath},
        {"loss", c.loss},
        {"save", c.savePath},
        {"optimizer", c.optimizer.kind ? Json(optimizerName(*c.optimizer.kind)) : Json()},
        {"momentum", c.optimizer.momentum ? numberJson(*c.optimizer.momentum) : Json()},
        {"weight_decay", c.optimizer.weightDecay ? numberJson(*c.optimizer.weightDecay) : Json()},
        {"controls", controlsJson(initial)}};
}

RunConfig configFrom(const Json &j)
{
    RunConfig c;
    if (!j.is_object())
        return c;
    c.scenario = jsonValue<std::string>(j, "scenario", "");
    c.modelPath = jsonValue<std::string>(j, "model", "");
    c.steps = jsonValue(j, "steps", 0);
    c.seed = jsonValue<std::uint64_t>(j, "seed", 1);
    c.device = jsonValue<std::string>(j, "device", "cpu");
    c.batchSize = jsonValue(j, "batch_size", 0);
    if (j.contains("bn_eps") && !j["bn_eps"].is_null())
        c.bnEps = numberFrom(j["bn_eps"]);
    c.snapshotEvery = jsonValue(j, "snapshot_every", c.snapshotEvery);
    c.snapshotRing = jsonValue(j, "snapshot_ring", c.snapshotRing);
    c.opLevelOrigin = jsonValue(j, "op_level_origin", c.opLevelOrigin);
    c.forecastHorizon = jsonValue(j, "forecast_horizon", c.forecastHorizon);
    c.devicePathOnCpu = jsonValue(j, "device_path_on_cpu", false);
    c.capsuleOnFailure = jsonValue(j, "capsule_on_failure", c.capsuleOnFailure);
    c.capsuleSteps = jsonValue<std::vector<int>>(j, "capsule_steps", {});
    if (j.contains("parallel") && j["parallel"].is_object())
        c.parallel = parallelFrom(j["parallel"]);
    if (j.contains("fault") && j["fault"].is_object()) {
        c.fault.step = jsonValue(j["fault"], "step", -1);
        c.fault.layer = jsonValue<std::string>(j["fault"], "layer", "");
        c.fault.rank = jsonValue(j["fault"], "rank", -1);
    }
    if (j.contains("nan_sample") && j["nan_sample"].is_object()) {
        c.nanSample.step = jsonValue(j["nan_sample"], "step", -1);
        c.nanSample.rank = jsonValue(j["nan_sample"], "rank", -1);
    }
    c.inputShape = jsonValue<std::vector<std::int64_t>>(j, "input_shape", {});
    c.tokenIds = jsonValue<std::string>(j, "input_dtype", "float32") == "int64";
    c.vocab = jsonValue<std::int64_t>(j, "vocab", 0);
    c.inputsPath = jsonValue<std::string>(j, "inputs", "");
    c.sideInputs = sideInputsFrom(j.contains("side_inputs") ? j["side_inputs"] : Json());
    c.output = jsonValue<std::string>(j, "output", "");
    c.targetsPath = jsonValue<std::string>(j, "targets", "");
    c.loss = jsonValue<std::string>(j, "loss", c.loss);
    c.savePath = jsonValue<std::string>(j, "save", "");
    c.optimizer.kind = parseOptimizer(jsonValue<std::string>(j, "optimizer", ""));
    if (j.contains("momentum") && j["momentum"].is_number())
        c.optimizer.momentum = numberFrom(j["momentum"]);
    if (j.contains("weight_decay") && j["weight_decay"].is_number())
        c.optimizer.weightDecay = numberFrom(j["weight_decay"]);
    if (j.contains("controls"))
        c.controls = controlsFrom(j["controls"]);
    if (j.contains("recorder") && j["recorder"].is_object())
        c.recordedLoop = jsonValue<std::string>(j["recorder"], "name", "a recorded loop");
    return c;
}

Json keepJson(const KeepPolicy &policy, int sampleEvery)
{
    return {{"policy", keepPolicyName(policy)},
            {"budget_bytes", policy.keepAll ? Json(nullptr) : Json(policy.budgetBytes)},
            {"first_steps", KeepPolicy::kFirstSteps},
            {"lead_up_steps", KeepPolicy::kLeadUpSteps},
            {"after_control_steps", KeepPolicy::kAfterControlSteps},
            {"sample_every", policy.keepAll ? 1 : sampleEvery}};
}

KeepPolicy keepFrom(const Json &j, int *sampleEvery)
{
    KeepPolicy p = parseKeepPolicy(jsonValue<std::string>(j, "policy", "all")).value_or(KeepPolicy::all());
    if (!p.keepAll)
        p.budgetBytes = std::max(jsonValue<std::int64_t>(j, "budget_bytes", p.budgetBytes), KeepPolicy::kSmallestBudgetBytes);
    if (sampleEvery)
        *sampleEvery = std::max(jsonValue<int>(j, "sample_every", p.keepAll ? 1 : KeepPolicy::kSampleEvery), 1);
    return p;
}

}  // namespace nanscope::record
