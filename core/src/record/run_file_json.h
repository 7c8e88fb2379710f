#pragma once
// The run file's JSON columns run.config and run.controls (run.summary and events.origin are
// nanscope/run_json.h's).
#include "nanscope/records.h"
#include "nanscope/run_config.h"
#include "nanscope/run_json.h"

#include <string>

namespace nanscope::record {

// j[key] as a T; `fallback` when it is missing, null or of another type (a hand-edited file: keep
// what can be read).
template <typename T> T jsonValue(const Json &j, const char *key, T fallback)
{
    const auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return fallback;
    try {
        return it->get<T>();
    } catch (const Json::exception &) {
        return fallback;
    }
}

// j[key] as a number written by numberJson; `fallback` when it is missing or null.
inline double jsonNumber(const Json &j, const char *key, double fallback)
{
    const auto it = j.find(key);
    return it == j.end() || it->is_null() ? fallback : numberFrom(*it);
}

// A list of sample or layer indices as a text column: a JSON array, "" (NULL) when empty.
std::string indexListText(const std::vector<std::int64_t> &v);
// The inverse; whatever is not a JSON array of integers reads as none.
std::vector<std::int64_t> indexListFrom(const std::string &text);

Json controlsJson(const Controls &c);
Controls controlsFrom(const Json &j);
// `initial` and `steps` as the run resolved them (initialControls(), stepsToRun()): this file stays
// free of the scenario registry, so the reader builds without LibTorch (the fuzz target).
Json configJson(const RunConfig &c, const Controls &initial, int steps);
RunConfig configFrom(const Json &j);

// run.keep: the policy a file was written with and its constants, `sample_every` the stride its
// sampled steps have now (docs/run-file.md, "Layer detail").
Json keepJson(const KeepPolicy &policy, int sampleEvery);
KeepPolicy keepFrom(const Json &j, int *sampleEvery = nullptr);

}  // namespace nanscope::record
