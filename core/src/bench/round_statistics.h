#pragma once
#include "nanscope/bench.h"

#include <vector>

namespace nanscope {

// The spread of `values` (each round's own ratio); all zero when there are none.
RoundSpread spreadOf(std::vector<double> values);

}  // namespace nanscope
