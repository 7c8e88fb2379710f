#pragma once
// Parameters and buffers that already held NaN or Inf when a model file was loaded: a file can
// load without complaint and carry garbage, so the loader reports them.
#include "nanscope/health.h"

#include <string>

namespace nanscope {

struct NonFiniteState {
    std::string name;  // dotted, as named_parameters() / named_buffers() spell it
    bool buffer = false;
    TensorHealth health;
};

// "parameter fc.weight holds 2 NaN, 1 +Inf, 0 -Inf of 12 values as loaded": one line for the
// event log and for `inspect`'s report.
std::string describeNonFiniteState(const NonFiniteState &state);

}  // namespace nanscope
