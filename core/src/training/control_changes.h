#pragma once
// What changed between two sets of controls, as the event log, the run file and the command line
// say it: one ControlChange per control ("lr", "0.1", "0.01") and one line for them all.
#include "nanscope/controls.h"
#include "nanscope/records.h"

#include <string>
#include <vector>

namespace nanscope {

std::vector<ControlChange> diffControls(const Controls &a, const Controls &b, const std::string &device,
                                        std::string &text);

}  // namespace nanscope
