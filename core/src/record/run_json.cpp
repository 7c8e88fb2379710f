// The summary and origin JSON of nanscope/run_json.h: one schema for the command line and the file.
#include "nanscope/run_json.h"

#include "record/run_file_json.h"

#include <cmath>
#include <limits>

namespace nanscope {

using record::jsonNumber;
using record::jsonValue;

Json textOrNull(const std::string &text) { return text.empty() ? Json() : Json(text); }

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

Json originJson(const Origin &o)
{
    const bool inLayer = o.layer >= 0;
    return Json{{"step", o.step},
                {"phase", phaseName(o.phase)},
                {"layer", inLayer ? Json(o.layerPath) : Json()},
                {"layer_id", inLayer ? Json(o.layer) : Json()},
                {"op", textOrNull(o.op)},
                {"source", textOrNull(o.source)},
                {"produced", o.produced},
                {"chain", textOrNull(o.chain)},
                {"explanation", o.explanation},
                // The layer's call that made it, when the layer ran more than once.
                {"call", o.calls > 1 ? Json(o.call) : Json()},
                {"calls", o.calls > 1 ? Json(o.calls) : Json()}};
}

Origin originFrom(const Json &j, const std::vector<Layer> &layers)
{
    Origin o;
    if (!j.is_object())
        return o;
    o.step = jsonValue(j, "step", -1);
    o.phase = phaseFromName(jsonValue<std::string>(j, "phase", ""));
    const auto layer = j.find("layer");
    if (layer != j.end() && layer->is_number_integer()) {  // the earlier layout: an id, its path beside it
        o.layer = layer->get<int>();
        o.layerPath = jsonValue<std::string>(j, "layer_path", "");
    } else if (layer != j.end() && layer->is_string()) {
        o.layerPath = layer->get<std::string>();
        o.layer = jsonValue(j, "layer_id", -1);
        if (o.layer < 0)
            for (const Layer &l : layers)
                if (l.path == o.layerPath)
                    o.layer = l.id;
    }
    if (o.layer >= 0 && o.layer < int(layers.size()) && o.layerPath.empty())
        o.layerPath = layers[std::size_t(o.layer)].path;
    o.op = jsonValue<std::string>(j, "op", "");
    o.call = jsonValue(j, "call", 0);  // absent or null (a layer that ran once, an older file): 0
    o.calls = jsonValue(j, "calls", 0);
    o.source = jsonValue<std::string>(j, "source", "");
    o.produced = jsonValue(j, "produced", false);
    o.chain = jsonValue<std::string>(j, "chain", "");
    o.explanation = jsonValue<std::string>(j, "explanation", "");
    return o;
}

Json summaryJson(const RunSummary &s, const std::vector<Layer> &layers)
{
    const bool nonFinite = s.firstNonFiniteStep >= 0;
    Json perLayer = Json::object();
    for (std::size_t i = 0; i < s.nonFiniteStepsPerLayer.size() && i < layers.size(); ++i)
        if (s.nonFiniteStepsPerLayer[i] > 0)
            perLayer[layers[i].path] = s.nonFiniteStepsPerLayer[i];
    return Json{{"source", s.source},
                {"steps_run", s.stepsRun},
                {"finished", s.finished},
                {"error", textOrNull(s.error)},
                {"first_nonfinite_step", nonFinite ? Json(s.firstNonFiniteStep) : Json()},
                {"origin", nonFinite && s.origin.valid() ? originJson(s.origin) : Json()},
                {"nonfinite_steps", s.nonFiniteSteps},
                {"nonfinite_steps_per_layer", perLayer},
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
                {"final_state_finite", s.finalStateFinite},
                {"challenge", s.challenge ? Json{{"id", s.challenge->id},
                                                 {"goal", s.challenge->goal},
                                                 {"met", s.challenge->met}}
                                          : Json()}};
}

RunSummary summaryFrom(const Json &j, const std::vector<Layer> &layers)
{
    RunSummary s;
    if (!j.is_object())
        return s;
    s.source = jsonValue<std::string>(j, "source", "");
    s.stepsRun = jsonValue(j, "steps_run", 0);
    s.finished = jsonValue(j, "finished", true);
    s.error = jsonValue<std::string>(j, "error", "");
    s.firstNonFiniteStep = jsonValue(j, "first_nonfinite_step", -1);
    if (j.contains("origin"))
        s.origin = originFrom(j["origin"], layers);
    s.nonFiniteSteps = jsonValue(j, "nonfinite_steps", 0);
    s.nonFiniteStepsPerLayer.assign(layers.size(), 0);
    const auto perLayer = j.find("nonfinite_steps_per_layer");
    if (perLayer != j.end() && perLayer->is_array()) {  // the earlier layout: by layer id
        const auto counts = jsonValue<std::vector<int>>(j, "nonfinite_steps_per_layer", {});
        for (std::size_t i = 0; i < counts.size() && i < layers.size(); ++i)
            s.nonFiniteStepsPerLayer[i] = counts[i];
    } else if (perLayer != j.end() && perLayer->is_object()) {
        for (const Layer &l : layers)
            if (perLayer->contains(l.path) && (*perLayer)[l.path].is_number_integer())
                s.nonFiniteStepsPerLayer[std::size_t(l.id)] = (*perLayer)[l.path].get<int>();
    }
    s.quarantinedSamples = jsonValue<std::vector<std::int64_t>>(j, "quarantined_samples", {});
    s.rollbacks = jsonValue(j, "rollbacks", 0);
    s.skippedSteps = jsonValue(j, "skipped_steps", 0);
    s.scalerSkippedSteps = jsonValue(j, "scaler_skipped_steps", 0);
    s.finalLossScale = jsonNumber(j, "final_loss_scale", 1.0);
    s.precision = jsonValue<std::string>(j, "precision", "");
    s.optimizer = jsonValue<std::string>(j, "optimizer", "");
    s.finalLearningRate = jsonNumber(j, "final_learning_rate", 0.0);
    s.stepsPerSecond = jsonNumber(j, "steps_per_second", 0.0);
    s.stoppedByPolicy = jsonValue(j, "stopped_by_policy", false);
    s.finalStateFinite = jsonValue(j, "final_state_finite", true);
    const auto challenge = j.find("challenge");
    if (challenge != j.end() && challenge->is_object())  // null or absent: none (older files)
        s.challenge = ChallengeResult{jsonValue<std::string>(*challenge, "id", ""),
                                      jsonValue<std::string>(*challenge, "goal", ""),
                                      jsonValue(*challenge, "met", false)};
    return s;
}

}  // namespace nanscope
