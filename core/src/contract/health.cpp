// How the health of several tensors folds into one: plain arithmetic, no LibTorch.
#include "nanscope/health.h"

#include <cmath>

namespace nanscope {

void TensorHealth::merge(const TensorHealth &o)
{
    if (!o.present)
        return;
    const bool hadFinite = present && numel > nonFinite();
    const bool otherFinite = o.numel > o.nonFinite();
    numel += o.numel;
    nan += o.nan;
    posInf += o.posInf;
    negInf += o.negInf;
    if (otherFinite) {
        min = hadFinite ? std::fmin(min, o.min) : o.min;
        max = hadFinite ? std::fmax(max, o.max) : o.max;
        absMax = hadFinite ? std::fmax(absMax, o.absMax) : o.absMax;
    }
    finiteL2 = std::sqrt(finiteL2 * finiteL2 + o.finiteL2 * o.finiteL2);
    present = true;
}

}  // namespace nanscope
