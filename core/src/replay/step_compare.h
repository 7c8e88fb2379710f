#pragma once
// A recorded step against the same step computed again: identical, the same failure within a
// tolerance, or different, and where the difference first shows.
#include "nanscope/records.h"
#include "nanscope/replay.h"

#include <string>
#include <vector>

namespace nanscope {

struct StepComparison {
    ReplayVerdict verdict = ReplayVerdict::NotReproduced;
    int differsAt = -1;
    std::string differsWhat;
};

// The first layer that differs: one whose own parameters differ first (the weights themselves
// were not what they were), else the first in model order whose descendants do not differ.
StepComparison compareSteps(const StepRecord &recorded, const StepRecord &replayed, const std::vector<Layer> &layers,
                            double tolerance);

}  // namespace nanscope
