#pragma once
#include "nanscope/run_diff.h"

#include <vector>

namespace nanscope::record {

// The settings in which `a` and `b` differ, `a`'s order first, then what only `b` has, then the
// control changes made at different steps or to different values.
std::vector<SettingDifference> settingDifferences(const RunFile &a, const RunFile &b);

}  // namespace nanscope::record
