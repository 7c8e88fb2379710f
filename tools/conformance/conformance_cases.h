#pragma once
// The step sequences of the conformance corpus (nanscope_conformance): synthetic records that walk
// the C++ rules through their branches (a value growing towards overflow, one shrinking towards
// fp16's smallest, updates too large and too small, a loss scale falling, an absorbed overflow, a
// failed step, noise that must stay quiet), each long enough to fill more than one chunk.
#include "nanscope/records.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace nanscope::conformance {

struct Case {
    std::string name;
    std::string precision;  // "fp32", "fp16", "bf16"
    std::vector<Layer> layers;
    std::vector<StepRecord> records;
};

std::vector<Case> cases();

// A long run for the retention of layer rows: which steps hold a non-finite value, the events
// raised while a step is written (at that step: the event's kind and the step it is about), and
// the steps after which a budget thins the samples.
struct RetentionCase {
    std::string name;
    int steps = 0;
    std::set<int> nonFinite;
    std::vector<std::pair<int, std::pair<EventKind, int>>> events;
    std::set<int> thinAfter;
};

std::vector<RetentionCase> retentionCases();

}  // namespace nanscope::conformance
