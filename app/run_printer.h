#pragma once
// The `run` sub-command's observer: readable progress and a final report, or one JSON object
// per line (step, event, summary).
#include "nanscope/run_source.h"

#include <nlohmann/json.hpp>

#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace nanscope::cli {

class RunPrinter final : public RunObserver {
public:
    // With `stopAtPause`, a pause on a non-finite step stops the run (nobody is there to decide).
    RunPrinter(std::ostream &out, bool json, RunSource &source, bool stopAtPause)
        : out_(out), json_(json), source_(source), stopAtPause_(stopAtPause)
    {
    }
    // `report` on a run file: the first line and the final report, without the steps and events.
    void setSummaryOnly(bool on) { summaryOnly_ = on; }

    void runStarted(int, const std::vector<Layer> &layers, const RunConfig &config) override;
    void stepRecorded(const StepRecordPtr &r) override;
    void eventRaised(const Event &e) override;
    void runFinished(const RunSummary &s) override;

    RunSummary summary() const;
    // The summary as `--json` prints it: {"type": "summary", ...} in the run file's schema.
    nlohmann::ordered_json summaryLine() const;

private:
    void printStepJson(const StepRecord &r);
    void printStepText(const StepRecord &r);
    nlohmann::ordered_json summaryLine(const RunSummary &s) const;
    void printSummaryText(const RunSummary &s);

    mutable std::mutex mutex_;
    std::ostream &out_;
    bool json_;
    RunSource &source_;
    bool stopAtPause_;
    bool summaryOnly_ = false;
    std::vector<Layer> layers_;
    int every_ = 1;
    bool sawNonFinite_ = false;
    bool scaling_ = false;  // the run started with loss scaling: show the scale per step
    RunSummary summary_;
};

}  // namespace nanscope::cli
