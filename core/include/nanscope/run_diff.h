#pragma once
// Two runs side by side: what differs in how they were set up, the first step where their
// measurements part (and in which layer and kind of health), and where each went non-finite.
// Steps are matched by number and layers by path; the files are read in batches, never whole.
#include "nanscope/health_kinds.h"
#include "nanscope/run_json.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nanscope {

class RunFile;

// One setting that differs: "controls.learning_rate", "1", "0.5" (JSON text; "-" where a run
// lacks it). Control changes during the run read "control change at step 12".
struct SettingDifference {
    std::string key;
    std::string a;
    std::string b;
};

// Where two runs first part. `what` is a HealthKindInfo id ("forward", ...), "loss", or "input"
// when nothing but the input batches differs;
// `layer` a layer path for a kind (the root is ""), empty otherwise.
struct RunParting {
    int step = -1;  // -1: identical over every step they share
    std::string what;
    std::string layer;
    std::string detail;  // the first statistic that differs: "max 0.731 against 0.694"
    bool paramsDiffer = false;  // the layer's own parameters differ at that step too
    bool inputDiffers = false;  // the step's input batches differ (other data, another rank's shard)
};

struct RunDiff {
    double tolerance = 0.0;  // 0: bit for bit
    std::vector<SettingDifference> settings;
    std::vector<std::string> layersOnlyInA;
    std::vector<std::string> layersOnlyInB;
    std::int64_t stepsA = 0;
    std::int64_t stepsB = 0;
    std::int64_t stepsCompared = 0;  // steps of the same number in both
    RunParting parting;
    int firstFailedA = -1;  // each run's first non-finite step (StepRecord::failed), -1: none
    int firstFailedB = -1;
    // Per HealthKind: the same on every shared layer at every compared step.
    std::array<bool, 4> identicalThroughout{{true, true, true, true}};

    bool identical() const { return parting.step < 0 && stepsA == stepsB && layersOnlyInA.empty() && layersOnlyInB.empty(); }
};

// Compares `a` with `b`; `progress` (if set) gets the steps read so far now and then. Throws
// RunFileError when a file cannot be read.
RunDiff diffRuns(const RunFile &a, const RunFile &b, double tolerance,
                 const std::function<void(std::int64_t)> &progress = {});

// {"type":"diff", ...}: docs/diff.md lists the keys.
Json runDiffJson(const RunDiff &d, const std::string &pathA, const std::string &pathB);

}  // namespace nanscope
