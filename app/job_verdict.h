#pragma once
// A data-parallel job's answer in one place: which rank went non-finite first, at which step,
// phase and layer; the ranks that skipped steps; whether the ranks' parameters stayed identical.
// Fed each rank's `run --json` lines (its summary and events), as `run --ranks` gathers them and
// `report FOLDER` reads them back; printed as one text line and one {"type":"job",...} object.
#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>

namespace nanscope::cli {

class JobVerdict {
public:
    explicit JobVerdict(int world) : world_(world) {}

    // One line of rank `rank`'s JSON output; anything but its summary and events is ignored.
    void line(int rank, const nlohmann::json &j);

    // "job of 2 ranks: rank 0 went non-finite first, at step 7 (forward, layer fc2); ..."
    std::string text() const;
    // {"type":"job","world":2,"first_nonfinite_rank":0,"first_nonfinite_step":7,...}
    nlohmann::ordered_json json() const;  // "type" first, as every line of `--json`

private:
    struct Rank {
        int firstNonFiniteStep = -1;
        std::string phase;                 // the origin's; empty when finite
        std::optional<std::string> layer;  // the origin's layer path; none for the input and the loss
        int skippedSteps = 0;
        std::optional<bool> parametersIdentical;
        bool finished = false;  // its summary came and says the run finished without an error
    };
    // The rank whose first non-finite step came first (the lowest on a tie), or none.
    const std::pair<const int, Rank> *firstFailing() const;
    std::optional<bool> parametersIdentical() const;

    int world_;
    std::map<int, Rank> ranks_;
};

}  // namespace nanscope::cli
