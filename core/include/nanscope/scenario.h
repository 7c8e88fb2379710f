#pragma once
// The built-in demo scenarios (see docs/scenarios.md): ids, titles and default settings.
#include "nanscope/controls.h"

#include <string>
#include <vector>

namespace nanscope {

struct ScenarioInfo {
    std::string id;
    std::string title;  // one line, shown by `nanscope scenarios`
    Controls defaults;  // the controls a run of this scenario starts with
    int defaultSteps = 200;
};

const std::vector<ScenarioInfo> &scenarios();
const ScenarioInfo *findScenario(const std::string &id);

}  // namespace nanscope
