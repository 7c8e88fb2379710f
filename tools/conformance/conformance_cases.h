#pragma once
// The step sequences of the conformance corpus (nanscope_conformance): synthetic records that walk
// the C++ rules through their branches (a value growing towards overflow, one shrinking towards
// fp16's smallest, updates too large and too small, a loss scale falling, an absorbed overflow, a
// failed step, noise that must stay quiet), each long enough to fill more than one chunk.
#include "nanscope/records.h"

#include <string>
#include <vector>

namespace nanscope::conformance {

struct Case {
    std::string name;
    std::string precision;  // "fp32", "fp16", "bf16"
    std::vector<Layer> layers;
    std::vector<StepRecord> records;
};

std::vector<Case> cases();

}  // namespace nanscope::conformance
