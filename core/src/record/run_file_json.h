#pragma once
// The run file's JSON columns (run.config, run.controls, run.summary, events.origin). Non-finite
// numbers are written as the strings "NaN", "Infinity" and "-Infinity", as the command line does.
#include "nanscope/records.h"
#include "nanscope/run_config.h"

#include <nlohmann/json.hpp>

#include <string>

namespace nanscope::record {

using Json = nlohmann::ordered_json;

// A list of sample or layer indices as a text column: a JSON array, "" (NULL) when empty.
std::string indexListText(const std::vector<std::int64_t> &v);
// The inverse; whatever is not a JSON array of integers reads as none.
std::vector<std::int64_t> indexListFrom(const std::string &text);

Json numberJson(double v);
double numberFrom(const Json &j);  // the inverse; a missing or unreadable value reads as NaN

Json controlsJson(const Controls &c);
Controls controlsFrom(const Json &j);
// `initial` and `steps` as the run resolved them (initialControls(), stepsToRun()): this file stays
// free of the scenario registry, so the reader builds without LibTorch (the fuzz target).
Json configJson(const RunConfig &c, const Controls &initial, int steps);
RunConfig configFrom(const Json &j);
Json originJson(const Origin &o);
Origin originFrom(const Json &j);
Json summaryJson(const RunSummary &s);
RunSummary summaryFrom(const Json &j);

}  // namespace nanscope::record
