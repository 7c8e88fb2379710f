// The settings half of a run diff: the run row and its config, flattened to dotted keys, and the
// control changes made during each run.
#include "record/run_diff_settings.h"

#include "nanscope/run_file.h"

#include <map>

namespace nanscope::record {

namespace {

void flatten(const Json &j, const std::string &prefix, std::vector<std::pair<std::string, std::string>> &out)
{
    if (j.is_object() && !j.empty()) {
        for (auto it = j.begin(); it != j.end(); ++it)
            flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
        return;
    }
    out.emplace_back(prefix, j.dump());
}

// Every setting of a run as (key, JSON text), in the file's order.
std::vector<std::pair<std::string, std::string>> settingsOf(const RunFile &file)
{
    const RunFileInfo &i = file.info();
    std::vector<std::pair<std::string, std::string>> out{
        {"format_version", std::to_string(i.formatVersion)},
        {"nanscope_version", Json(i.nanscopeVersion).dump()},
        {"libtorch_version", Json(i.libtorchVersion).dump()},
        {"model_sha256", i.modelSha256.empty() ? "null" : Json(i.modelSha256).dump()},
        {"rank", i.worldSize > 0 ? std::to_string(i.rank) : "null"},
        {"world_size", i.worldSize > 0 ? std::to_string(i.worldSize) : "null"},
    };
    Json config = Json::parse(i.configText, nullptr, false);
    if (config.is_discarded())
        return out;
    // A Python run's id names the run for the requests that steer it: not a setting.
    if (config.contains("recorder") && config["recorder"].is_object())
        config["recorder"].erase("run_id");
    flatten(config, "", out);
    return out;
}

// "step 12: lr 0.1 -> 0.01": each control change event of the run, in order.
std::map<int, std::string> controlChangesOf(const RunFile &file)
{
    std::map<int, std::string> out;
    for (const Event &e : file.readEvents(0))
        if (e.kind == EventKind::ControlChange)
            out[e.step] += (out[e.step].empty() ? "" : "; ") + e.text;
    return out;
}

}  // namespace

std::vector<SettingDifference> settingDifferences(const RunFile &a, const RunFile &b)
{
    const auto settingsA = settingsOf(a);
    const auto settingsB = settingsOf(b);
    const std::map<std::string, std::string> inB(settingsB.begin(), settingsB.end());
    const std::map<std::string, std::string> inA(settingsA.begin(), settingsA.end());
    std::vector<SettingDifference> out;
    for (const auto &[key, value] : settingsA) {
        const auto other = inB.find(key);
        const std::string valueB = other == inB.end() ? "-" : other->second;
        if (value != valueB)
            out.push_back({key, value, valueB});
    }
    for (const auto &[key, value] : settingsB)
        if (!inA.count(key))
            out.push_back({key, "-", value});
    const auto changesA = controlChangesOf(a);
    const auto changesB = controlChangesOf(b);
    std::map<int, std::pair<std::string, std::string>> changes;
    for (const auto &[step, text] : changesA)
        changes[step].first = text;
    for (const auto &[step, text] : changesB)
        changes[step].second = text;
    for (const auto &[step, texts] : changes)
        if (texts.first != texts.second)
            out.push_back({"control change at step " + std::to_string(step), texts.first.empty() ? "-" : texts.first,
                           texts.second.empty() ? "-" : texts.second});
    return out;
}

}  // namespace nanscope::record
