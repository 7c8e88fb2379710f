#pragma once
// Health of one tensor: what a NaN debugger needs to know, as a plain value.
#include <cstdint>
#include <limits>

namespace nanscope {

struct TensorHealth {
    std::int64_t numel = 0;
    std::int64_t nan = 0;
    std::int64_t posInf = 0;
    std::int64_t negInf = 0;
    // Over the finite elements only; NaN when there are none.
    double min = std::numeric_limits<double>::quiet_NaN();
    double max = std::numeric_limits<double>::quiet_NaN();
    double absMax = std::numeric_limits<double>::quiet_NaN();
    double finiteL2 = 0.0;  // L2 norm of the finite part
    bool present = false;   // false: nothing was observed (no gradient reached this tensor, ...)

    std::int64_t nonFinite() const { return nan + posInf + negInf; }
    bool hasNonFinite() const { return nonFinite() > 0; }
    double nonFiniteFraction() const { return numel > 0 ? double(nonFinite()) / double(numel) : 0.0; }

    // Folds another tensor's health into this one (parameters of a layer, say).
    void merge(const TensorHealth &other);
};

}  // namespace nanscope
