#pragma once
// The built-in demo scenarios (see docs/scenarios.md): ids, titles and default settings.
#include "nanscope/controls.h"

#include <string>
#include <vector>

namespace nanscope {

// The fix a scenario's lesson teaches, where no general control (learning rate, clipping,
// recovery, precision) is that fix: a switch the student turns on, with a value where it has one.
struct ScenarioFix {
    std::string name;       // "stable softmax"; empty: the scenario has no fix of its own
    std::string valueName;  // "eps"; empty: a plain switch
    double defaultValue = 0.0;
    bool atStart = false;  // changes the data or the init: takes effect when a run starts, else at the next step
    std::string what;      // one line: what the fix changes

    bool exists() const { return !name.empty(); }
    bool hasValue() const { return !valueName.empty(); }
};

struct ScenarioInfo {
    std::string id;
    std::string title;  // one line, shown by `nanscope scenarios`
    Controls defaults;  // the controls a run of this scenario starts with
    int defaultSteps = 200;
    ScenarioFix fix = {};
};

const std::vector<ScenarioInfo> &scenarios();
const ScenarioInfo *findScenario(const std::string &id);
// The fix of a run's scenario (none for a model file or a recorded loop).
ScenarioFix scenarioFix(const std::string &scenario);

}  // namespace nanscope
