#pragma once
// The JSON of a run's summary and of a step's origin, defined once: `run --json`, `report --json`,
// `replay --json` and a run file's run.summary and events.origin write and read these functions
// (docs/run-file.md, "The summary"). Needs nlohmann/json, not LibTorch.
#include "nanscope/records.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace nanscope {

using Json = nlohmann::ordered_json;

// JSON has no literal for NaN or ±Inf: they become the strings "NaN", "Infinity", "-Infinity".
Json numberJson(double v);
double numberFrom(const Json &j);  // the inverse; a missing or unreadable value reads as NaN

Json textOrNull(const std::string &text);  // null for an empty text (an op nobody could name)

// {"step", "phase", "layer" (the path; null: no layer), "layer_id", "op", "source", "produced",
// "chain", "explanation"}; an empty op, source or chain is null.
Json originJson(const Origin &o);
// Reads that and the earlier layout ("layer" an id, "layer_path" its path); `layers` give what a
// file did not say.
Origin originFrom(const Json &j, const std::vector<Layer> &layers);

// The summary's keys, as docs/run-file.md lists them. Per-layer counts are an object keyed by the
// layer's path (the root is ""), layers with no non-finite step left out.
Json summaryJson(const RunSummary &s, const std::vector<Layer> &layers);
// Reads that and the earlier run-file layout (counts as an array by layer id, "error": "").
RunSummary summaryFrom(const Json &j, const std::vector<Layer> &layers);

}  // namespace nanscope
