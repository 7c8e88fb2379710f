#pragma once
// Reduced precision as the user sees it: how a precision is labelled on a device, and how close a
// tensor's values come to the largest finite fp16 number. Plain values only.
#include "nanscope/controls.h"
#include "nanscope/health.h"

#include <string>

namespace nanscope {

// The largest finite IEEE half-precision value; anything beyond rounds to +-Inf in fp16.
constexpr double kFp16Max = 65504.0;

// The largest finite value of a precision: 3.4e38 (fp32), 3.39e38 (bf16), 65504 (fp16).
double largestFinite(Precision p);
// The smallest positive value a precision holds (its smallest subnormal): 1.4e-45 (fp32),
// 9.2e-41 (bf16), 6.0e-8 (fp16). Below half of it a value rounds to 0.
double smallestPositive(Precision p);

// "fp32", "fp16", "bf16" on CUDA; "fp16 (emulated on CPU)" for fp16 on the CPU, where NaNScope
// rounds every observed layer output (and the gradients flowing back through it) through half.
std::string precisionLabel(Precision p, const std::string &device);

// Whether a run in `p` on `device` scales its loss (fp16 with loss scaling enabled).
bool usesLossScaling(const Controls &c);

// fp16 headroom of an observed tensor: its finite absmax / 65504. Below 1 it fits in fp16; at 1
// or more it would overflow. +Inf when the tensor already holds +-Inf, NaN when nothing was
// observed. Derived from TensorHealth::absMax, so the records need not store it.
double fp16Headroom(const TensorHealth &h);
// The same ratio for a largest finite magnitude already known (a decimated map cell's).
constexpr double fp16Headroom(double finiteAbsMax) { return finiteAbsMax / kFp16Max; }

}  // namespace nanscope
