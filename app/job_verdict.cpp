#include "job_verdict.h"

#include "nanscope/job_folder.h"

namespace nanscope::cli {

namespace {

int integerOr(const nlohmann::json &j, const char *key, int otherwise)
{
    return j.contains(key) && j[key].is_number_integer() ? j[key].get<int>() : otherwise;
}

std::string stringOr(const nlohmann::json &j, const char *key)
{
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

}  // namespace

void JobVerdict::line(int rank, const nlohmann::json &j)
{
    if (!j.is_object())
        return;
    const std::string type = stringOr(j, "type");
    Rank &r = ranks_[rank];
    if (type == "summary") {
        const bool failed = j.contains("error") && j["error"].is_string() && !j["error"].get<std::string>().empty();
        r.finished = !failed && !(j.contains("finished") && j["finished"] == false);
        r.firstNonFiniteStep = integerOr(j, "first_nonfinite_step", -1);
        const nlohmann::json origin = j.contains("origin") ? j["origin"] : nlohmann::json();
        r.phase = stringOr(origin, "phase");
        // The input batch and the loss are in no layer, whatever path the origin gives them.
        const bool inLayer = r.phase != "input" && r.phase != "loss" && origin.contains("layer") &&
                             origin["layer"].is_string();
        r.layer = inLayer ? std::optional<std::string>(origin["layer"].get<std::string>()) : std::nullopt;
        r.skippedSteps = integerOr(j, "skipped_steps", 0);
    } else if (type == "event") {
        const std::string text = stringOr(j, "text");
        if (stringOr(j, "kind") == "info" && text.rfind(kParametersIdentical, 0) == 0)
            r.parametersIdentical = r.parametersIdentical.value_or(true);
        else if (stringOr(j, "kind") == "warning" && text.find(kParametersDiffer) != std::string::npos)
            r.parametersIdentical = false;
    }
}

const std::pair<const int, JobVerdict::Rank> *JobVerdict::firstFailing() const
{
    const std::pair<const int, Rank> *first = nullptr;
    for (const auto &entry : ranks_) {  // by rank: the lowest wins a tie
        const int step = entry.second.firstNonFiniteStep;
        if (step >= 0 && (!first || step < first->second.firstNonFiniteStep))
            first = &entry;
    }
    return first;
}

// Identical only when every rank said so; different when any rank saw a difference.
std::optional<bool> JobVerdict::parametersIdentical() const
{
    bool unknown = ranks_.size() < std::size_t(world_);
    for (const auto &entry : ranks_) {
        if (entry.second.parametersIdentical == false)
            return false;
        unknown = unknown || !entry.second.parametersIdentical;
    }
    return unknown ? std::nullopt : std::optional<bool>(true);
}

nlohmann::ordered_json JobVerdict::json() const
{
    nlohmann::ordered_json j{{"type", "job"}, {"world", world_}};
    const auto *first = firstFailing();
    j["first_nonfinite_rank"] = first ? nlohmann::json(first->first) : nlohmann::json();
    j["first_nonfinite_step"] = first ? nlohmann::json(first->second.firstNonFiniteStep) : nlohmann::json();
    j["phase"] = first && !first->second.phase.empty() ? nlohmann::json(first->second.phase) : nlohmann::json();
    j["layer"] = first && first->second.layer ? nlohmann::json(*first->second.layer) : nlohmann::json();
    nlohmann::json skipped = nlohmann::json::array();
    nlohmann::json unfinished = nlohmann::json::array();
    for (int rank = 0; rank < world_; ++rank) {
        const auto it = ranks_.find(rank);
        if (it == ranks_.end() || !it->second.finished)
            unfinished.push_back(rank);
        if (it != ranks_.end() && it->second.skippedSteps > 0)
            skipped.push_back(rank);
    }
    j["ranks_that_skipped"] = skipped;
    j["ranks_unfinished"] = unfinished;
    const std::optional<bool> identical = parametersIdentical();
    j["parameters_identical"] = identical ? nlohmann::json(*identical) : nlohmann::json();
    return j;
}

std::string JobVerdict::text() const
{
    const nlohmann::ordered_json j = json();
    std::string t = "job of " + std::to_string(world_) + " ranks: ";
    if (j["first_nonfinite_rank"].is_null()) {
        t += "no rank went non-finite";
    } else {
        t += "rank " + j["first_nonfinite_rank"].dump() + " went non-finite first, at step " +
             j["first_nonfinite_step"].dump();
        std::string where = j["phase"].is_string() ? j["phase"].get<std::string>() : std::string();
        if (j["layer"].is_string())
            where += (where.empty() ? "" : ", ") + std::string("layer ") +
                     (j["layer"].get<std::string>().empty() ? "(the model)" : j["layer"].get<std::string>());
        if (!where.empty())
            t += " (" + where + ")";
    }
    const auto list = [](const nlohmann::json &ranks) {
        std::string s;
        for (const auto &r : ranks)
            s += (s.empty() ? "" : ", ") + r.dump();
        return s;
    };
    t += j["ranks_that_skipped"].empty() ? "; no rank skipped a step"
                                         : "; ranks that skipped steps: " + list(j["ranks_that_skipped"]);
    if (!j["ranks_unfinished"].empty())
        t += "; ranks that did not finish: " + list(j["ranks_unfinished"]);
    const nlohmann::json &identical = j["parameters_identical"];
    t += identical.is_null() ? "; parameters not compared on every rank"
         : identical.get<bool>() ? "; parameters identical on every rank"
                                 : "; parameters differ between ranks";
    return t;
}

}  // namespace nanscope::cli
