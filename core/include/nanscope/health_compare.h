#pragma once
// Whether two measurements of a tensor's health are the same: bit for bit (tolerance 0), or within
// a relative tolerance on min, max and norm. Sizes and NaN/Inf counts always compare exactly. One
// rule for the replay's verdict (a step against its record) and for comparing two runs.
#include "nanscope/health.h"

#include <string>

namespace nanscope {

// NaN equals NaN; otherwise |a - b| <= tolerance * max(|a|, |b|), and a non-finite value only
// equals itself.
bool sameValue(double a, double b, double tolerance);
bool sameHealth(const TensorHealth &a, const TensorHealth &b, double tolerance);

// "2 NaN, 0 Inf, max |x| 3.5", or "nothing" when nothing was measured.
std::string describeHealth(const TensorHealth &h);
// The first statistic that differs, with both values: "max 0.731 against 0.694"; empty when
// sameHealth(a, b, tolerance).
std::string healthDifference(const TensorHealth &a, const TensorHealth &b, double tolerance);

}  // namespace nanscope
