#pragma once
// A dynamic loss scaler with the rules of PyTorch's torch.cuda.amp.GradScaler (LibTorch has no
// C++ one). Plain arithmetic, no tensors: the trainer scales, unscales and checks the gradients;
// this class decides whether the step is applied and what the next scale is.
#include "nanscope/controls.h"

namespace nanscope {

class LossScaler {
public:
    explicit LossScaler(const LossScaling &options = {});

    // Starts over from options.initialScale. Throws std::invalid_argument for invalid options.
    void reset(const LossScaling &options);

    double scale() const { return scale_; }
    // Clean steps in a row since the scale last changed.
    int growthTracker() const { return growthTracker_; }
    const LossScaling &options() const { return options_; }

    struct Outcome {
        bool applyStep = true;   // false: the gradients held Inf/NaN, skip the optimizer step
        double scaleUsed = 0.0;  // the scale this step's loss was multiplied by
        double nextScale = 0.0;  // the scale for the next step
        bool grew() const { return nextScale > scaleUsed; }
        bool backedOff() const { return nextScale < scaleUsed; }
    };
    // A scaler as it was at some step (a replay): the options stay.
    void restore(double scale, int growthTracker)
    {
        scale_ = scale;
        growthTracker_ = growthTracker;
    }
    // Call once per step, after the gradients were unscaled and checked.
    Outcome update(bool gradientsFinite);

private:
    LossScaling options_;
    double scale_ = 0.0;
    int growthTracker_ = 0;
};

}  // namespace nanscope
