#include "job_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace nanscope::cli {

namespace {

std::string orNone(const nlohmann::json &j, const char *key)
{
    return j.contains(key) && !j[key].is_null() ? j[key].dump() : std::string("none");
}

// A number to `digits` significant digits, for the text report.
std::string rounded(const nlohmann::json &number, int digits = 3)
{
    if (!number.is_number())
        return "none";
    std::ostringstream o;
    o << std::setprecision(digits) << number.get<double>();
    return o.str();
}

std::string rounded(const nlohmann::json &j, const char *key, int digits = 3)
{
    return j.contains(key) ? rounded(j[key], digits) : "none";
}

std::string benchText(const nlohmann::json &j)
{
    const nlohmann::json none = nlohmann::json::array({nullptr, nullptr});
    const nlohmann::json q = j.value("round_ratio_quartiles", none);
    const nlohmann::json ci = j.value("round_ratio_median_95ci", none);
    auto at = [](const nlohmann::json &pair, std::size_t i) { return pair.size() > i ? pair[i] : nlohmann::json(); };
    return "data-parallel step of " + j.value("model", "") + " on " + orNone(j, "world") + " ranks, median of " +
           orNone(j, "rounds") + " interleaved rounds: plain " + rounded(j, "plain_ms") + " ms, map + arbitration " +
           rounded(j, "checked_ms") + " ms: " + rounded(j, "ratio", 4) + "x\n  each round's own ratio: median " +
           rounded(j, "round_ratio_median", 4) + "x (95% confidence interval " + rounded(at(ci, 0), 4) + "x to " +
           rounded(at(ci, 1), 4) + "x), middle half " + rounded(at(q, 0)) + "x to " + rounded(at(q, 1)) +
           "x\n  the arbitration adds " + orNone(j, "arbitration_bytes") + " bytes to each step's gradient all-reduce";
}

}  // namespace

JobReport::JobReport(int world, bool json, std::ostream &out)
    : json_(json), out_(out), recorded_(std::size_t(std::max(world, 0)), -1), verdict_(world)
{
}

void JobReport::line(int rank, const std::string &text)
{
    const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
    verdict_.line(rank, parsed);
    bench_ = bench_ || (parsed.is_object() && parsed.value("type", "") == "bench-ranks");
    if (json_) {
        out_ << (text.size() > 1 && text[0] == '{' ? "{\"rank\":" + std::to_string(rank) + "," + text.substr(1) : text)
             << '\n';
        return;
    }
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        out_ << "rank " << rank << ": " << text << '\n';
        return;
    }
    const std::string type = j.value("type", "");
    const int step = j.contains("step") && j["step"].is_number_integer() ? j["step"].get<int>() : -1;
    if (type == "event") {
        // An event before the first step (the rank could not start) has no step to name.
        const std::string when = step >= 0 ? "step " + std::to_string(step) + ": " : std::string();
        hold(step, rank,
             "rank " + std::to_string(rank) + ": " + when + j.value("kind", "") + ": " + j.value("text", ""));
    } else if (type == "step" && std::size_t(rank) < recorded_.size()) {
        recorded_[std::size_t(rank)] = std::max(recorded_[std::size_t(rank)], step);
        release(*std::min_element(recorded_.begin(), recorded_.end()));
    } else if (type == "bench-ranks") {
        out_ << benchText(j) << '\n';
    } else if (type == "summary" && j.contains("error") && j["error"].is_string()) {
        summaries_.emplace_back(rank, "rank " + std::to_string(rank) + ": stopped after " + orNone(j, "steps_run") +
                                          " steps: " + j.value("error", ""));
    } else if (type == "summary") {
        summaries_.emplace_back(rank, "rank " + std::to_string(rank) + ": " + orNone(j, "steps_run") +
                                          " steps, first non-finite step " + orNone(j, "first_nonfinite_step") + ", " +
                                          orNone(j, "skipped_steps") + " skipped, final state " +
                                          (j.value("final_state_finite", false) ? "finite" : "non-finite"));
    }
}

void JobReport::hold(int step, int rank, std::string text) { events_.push_back({step, rank, std::move(text)}); }

void JobReport::release(int belowStep)
{
    std::vector<Held> out, keep;
    for (Held &e : events_)
        (e.step < belowStep ? out : keep).push_back(std::move(e));
    events_ = std::move(keep);
    std::stable_sort(out.begin(), out.end(),
                     [](const Held &a, const Held &b) { return a.step != b.step ? a.step < b.step : a.rank < b.rank; });
    for (const Held &e : out)
        out_ << e.text << '\n';
}

void JobReport::rankEnded(int rank)
{
    if (std::size_t(rank) >= recorded_.size())
        return;
    recorded_[std::size_t(rank)] = INT_MAX;
    release(*std::min_element(recorded_.begin(), recorded_.end()));
}

void JobReport::finish()
{
    release(INT_MAX);
    if (json_) {
        if (!bench_)
            out_ << verdict_.json().dump() << '\n';
        return;
    }
    if (!bench_)
        out_ << verdict_.text() << '\n';
    std::stable_sort(summaries_.begin(), summaries_.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });
    for (const auto &s : summaries_)
        out_ << s.second << '\n';
    summaries_.clear();
}

}  // namespace nanscope::cli
