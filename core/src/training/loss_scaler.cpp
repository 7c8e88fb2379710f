#include "training/loss_scaler.h"

#include <cmath>
#include <stdexcept>

namespace nanscope {

LossScaler::LossScaler(const LossScaling &options) { reset(options); }

void LossScaler::reset(const LossScaling &options)
{
    const std::string why = options.invalidReason();
    if (!why.empty())
        throw std::invalid_argument(why);
    options_ = options;
    scale_ = options.initialScale;
    growthTracker_ = 0;
}

LossScaler::Outcome LossScaler::update(bool gradientsFinite)
{
    Outcome o;
    o.scaleUsed = scale_;
    o.applyStep = gradientsFinite;
    if (!gradientsFinite) {
        // GradScaler: back off and start counting clean steps again.
        scale_ *= options_.backoffFactor;
        growthTracker_ = 0;
    } else if (++growthTracker_ == options_.growthInterval) {
        // GradScaler grows only to a finite scale.
        const double grown = scale_ * options_.growthFactor;
        if (std::isfinite(grown))
            scale_ = grown;
        growthTracker_ = 0;
    }
    o.nextScale = scale_;
    return o;
}

}  // namespace nanscope
