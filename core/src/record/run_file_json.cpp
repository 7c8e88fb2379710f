#include "record/run_file_json.h"

#include <cmath>
#include <limits>

namespace nanscope::record {

namespace {

template <typename T> T value(const Json &j, const char *key, T fallback)
{
    const auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return fallback;
    try {
        return it->get<T>();
    } catch (const Json::exception &) {
        return fallback;  // a hand-edited file: keep what can be read
    }
}

double number(const Json &j, const char *key, double fallback)
{
    const auto it = j.find(key);
    return it == j.end() || it->is_null() ? fallback : numberFrom(*it);
}

}  // namespace

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

Json numberJson(double v)
{
    if (std::isnan(v))
        return "NaN";
    if (std::isinf(v))
        return v > 0 ? "Infinity" : "-Infinity";
    return v;
}

double numberFrom(const Json &j)
{
    if (j.is_number())
        return j.get<double>();
    if (j.is_string()) {
        const std::string s = j.get<std::string>();
        if (s == "Infinity")
            return std::numeric_limits<double>::infinity();
        if (s == "-Infinity")
            return -std::numeric_limits<double>::infinity();
    }
    return std::numeric_limits<double>::quiet_NaN();
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
                {"pause_on_nonfinite", c.pauseOnNonFinite}};
}

Controls controlsFrom(const Json &j)
{
    Controls c;
    if (!j.is_object())
        return c;
    c.learningRate = number(j, "learning_rate", c.learningRate);
    if (j.contains("clip_norm") && !j["clip_norm"].is_null())
        c.clipNorm = numberFrom(j["clip_norm"]);
    c.precision = parsePrecision(value<std::string>(j, "precision", "fp32")).value_or(Precision::FP32);
    const Json ls = j.value("loss_scaling", Json::object());
    if (ls.is_object()) {
        c.lossScaling.enabled = value(ls, "enabled", c.lossScaling.enabled);
        c.lossScaling.initialScale = number(ls, "initial_scale", c.lossScaling.initialScale);
        c.lossScaling.growthFactor = number(ls, "growth_factor", c.lossScaling.growthFactor);
        c.lossScaling.backoffFactor = number(ls, "backoff_factor", c.lossScaling.backoffFactor);
        c.lossScaling.growthInterval = value(ls, "growth_interval", c.lossScaling.growthInterval);
    }
    const Json r = j.value("recovery", Json::object());
    if (r.is_object()) {
        c.recovery.quarantineSamples = value(r, "quarantine_samples", false);
        c.recovery.zeroNonFiniteGrads = value(r, "zero_nonfinite_grads", false);
        c.recovery.rollbackOnNonFiniteLoss = value(r, "rollback_on_nonfinite_loss", false);
        c.recovery.maxRetries = value(r, "max_retries", c.recovery.maxRetries);
    }
    c.pauseOnNonFinite = value(j, "pause_on_nonfinite", false);
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
        in.shape = value<std::vector<std::int64_t>>(item, "shape", {});
        in.dtype = value<std::string>(item, "dtype", "float32");
        in.path = value<std::string>(item, "file", "");
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
    p.rank = value(j, "rank", 0);
    p.world = value(j, "world_size", 0);
    p.address = value<std::string>(j, "address", p.address);
    p.port = value(j, "port", 0);
    p.onBadRank =
        value<std::string>(j, "on_bad_rank", "skip") == "exclude" ? BadRankPolicy::Exclude : BadRankPolicy::Skip;
    p.checkEvery = value(j, "check_every", p.checkEvery);
    p.timeoutSeconds = value(j, "timeout_s", p.timeoutSeconds);
    p.backend = parseCollectiveBackend(value<std::string>(j, "backend", "auto")).value_or(CollectiveBackend::Auto);
    p.localRank = value(j, "local_rank", p.localRank);
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
    c.scenario = value<std::string>(j, "scenario", "");
    c.modelPath = value<std::string>(j, "model", "");
    c.steps = value(j, "steps", 0);
    c.seed = value<std::uint64_t>(j, "seed", 1);
    c.device = value<std::string>(j, "device", "cpu");
    c.batchSize = value(j, "batch_size", 0);
    if (j.contains("bn_eps") && !j["bn_eps"].is_null())
        c.bnEps = numberFrom(j["bn_eps"]);
    c.snapshotEvery = value(j, "snapshot_every", c.snapshotEvery);
    c.snapshotRing = value(j, "snapshot_ring", c.snapshotRing);
    c.opLevelOrigin = value(j, "op_level_origin", c.opLevelOrigin);
    c.forecastHorizon = value(j, "forecast_horizon", c.forecastHorizon);
    c.devicePathOnCpu = value(j, "device_path_on_cpu", false);
    c.capsuleOnFailure = value(j, "capsule_on_failure", c.capsuleOnFailure);
    c.capsuleSteps = value<std::vector<int>>(j, "capsule_steps", {});
    if (j.contains("parallel") && j["parallel"].is_object())
        c.parallel = parallelFrom(j["parallel"]);
    if (j.contains("fault") && j["fault"].is_object()) {
        c.fault.step = value(j["fault"], "step", -1);
        c.fault.layer = value<std::string>(j["fault"], "layer", "");
        c.fault.rank = value(j["fault"], "rank", -1);
    }
    if (j.contains("nan_sample") && j["nan_sample"].is_object()) {
        c.nanSample.step = value(j["nan_sample"], "step", -1);
        c.nanSample.rank = value(j["nan_sample"], "rank", -1);
    }
    c.inputShape = value<std::vector<std::int64_t>>(j, "input_shape", {});
    c.tokenIds = value<std::string>(j, "input_dtype", "float32") == "int64";
    c.vocab = value<std::int64_t>(j, "vocab", 0);
    c.inputsPath = value<std::string>(j, "inputs", "");
    c.sideInputs = sideInputsFrom(j.contains("side_inputs") ? j["side_inputs"] : Json());
    c.output = value<std::string>(j, "output", "");
    c.targetsPath = value<std::string>(j, "targets", "");
    c.loss = value<std::string>(j, "loss", c.loss);
    c.savePath = value<std::string>(j, "save", "");
    c.optimizer.kind = parseOptimizer(value<std::string>(j, "optimizer", ""));
    if (j.contains("momentum") && j["momentum"].is_number())
        c.optimizer.momentum = numberFrom(j["momentum"]);
    if (j.contains("weight_decay") && j["weight_decay"].is_number())
        c.optimizer.weightDecay = numberFrom(j["weight_decay"]);
    if (j.contains("controls"))
        c.controls = controlsFrom(j["controls"]);
    return c;
}

Json originJson(const Origin &o)
{
    return Json{{"step", o.step},
                {"phase", phaseName(o.phase)},
                {"layer", o.layer},
                {"layer_path", o.layerPath},
                {"op", o.op},
                {"source", o.source},
                {"produced", o.produced},
                {"chain", o.chain},
                {"explanation", o.explanation}};
}

Origin originFrom(const Json &j)
{
    Origin o;
    if (!j.is_object())
        return o;
    o.step = value(j, "step", -1);
    o.phase = phaseFromName(value<std::string>(j, "phase", ""));
    o.layer = value(j, "layer", -1);
    o.layerPath = value<std::string>(j, "layer_path", "");
    o.op = value<std::string>(j, "op", "");
    o.source = value<std::string>(j, "source", "");
    o.produced = value(j, "produced", false);
    o.chain = value<std::string>(j, "chain", "");
    o.explanation = value<std::string>(j, "explanation", "");
    return o;
}

Json summaryJson(const RunSummary &s)
{
    return Json{{"source", s.source},
                {"steps_run", s.stepsRun},
                {"first_nonfinite_step", s.firstNonFiniteStep},
                {"origin", s.origin.valid() ? originJson(s.origin) : Json()},
                {"nonfinite_steps", s.nonFiniteSteps},
                {"quarantined_samples", s.quarantinedSamples},
                {"rollbacks", s.rollbacks},
                {"skipped_steps", s.skippedSteps},
                {"scaler_skipped_steps", s.scalerSkippedSteps},
                {"final_loss_scale", numberJson(s.finalLossScale)},
                {"precision", s.precision},
                {"optimizer", s.optimizer},
                {"final_learning_rate", numberJson(s.finalLearningRate)},
                {"steps_per_second", numberJson(s.stepsPerSecond)},
                {"stopped_by_policy", s.stoppedByPolicy},
                {"error", s.error},
                {"nonfinite_steps_per_layer", s.nonFiniteStepsPerLayer},
                {"final_state_finite", s.finalStateFinite}};
}

RunSummary summaryFrom(const Json &j)
{
    RunSummary s;
    if (!j.is_object())
        return s;
    s.source = value<std::string>(j, "source", "");
    s.stepsRun = value(j, "steps_run", 0);
    s.firstNonFiniteStep = value(j, "first_nonfinite_step", -1);
    if (j.contains("origin"))
        s.origin = originFrom(j["origin"]);
    s.nonFiniteSteps = value(j, "nonfinite_steps", 0);
    s.quarantinedSamples = value<std::vector<std::int64_t>>(j, "quarantined_samples", {});
    s.rollbacks = value(j, "rollbacks", 0);
    s.skippedSteps = value(j, "skipped_steps", 0);
    s.scalerSkippedSteps = value(j, "scaler_skipped_steps", 0);
    s.finalLossScale = number(j, "final_loss_scale", 1.0);
    s.precision = value<std::string>(j, "precision", "");
    s.optimizer = value<std::string>(j, "optimizer", "");
    s.finalLearningRate = number(j, "final_learning_rate", 0.0);
    s.stepsPerSecond = number(j, "steps_per_second", 0.0);
    s.stoppedByPolicy = value(j, "stopped_by_policy", false);
    s.error = value<std::string>(j, "error", "");
    s.nonFiniteStepsPerLayer = value<std::vector<int>>(j, "nonfinite_steps_per_layer", {});
    s.finalStateFinite = value(j, "final_state_finite", true);
    return s;
}

}  // namespace nanscope::record
