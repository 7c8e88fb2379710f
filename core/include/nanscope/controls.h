#pragma once
// The user's live controls, copied by value into the session and applied at the next step.
#include <optional>
#include <string>

namespace nanscope {

enum class Precision { FP32, FP16, BF16 };

struct RecoveryPolicy {
    bool quarantineSamples = false;        // drop only the non-finite samples of a batch, by index
    bool zeroNonFiniteGrads = false;       // replace NaN/Inf gradient entries with 0 before the update
    bool rollbackOnNonFiniteLoss = false;  // restore the last checked-finite state, halve the LR
    int maxRetries = 3;                    // rollbacks in a row before the run stops

    bool any() const { return quarantineSamples || zeroNonFiniteGrads || rollbackOnNonFiniteLoss; }
    static RecoveryPolicy none() { return {}; }
    static RecoveryPolicy skipOnly()
    {
        RecoveryPolicy p;
        p.quarantineSamples = true;
        return p;
    }
    static RecoveryPolicy full()
    {
        RecoveryPolicy p;
        p.quarantineSamples = p.zeroNonFiniteGrads = p.rollbackOnNonFiniteLoss = true;
        return p;
    }
};

// Dynamic loss scaling with the rules of PyTorch's GradScaler. Active only in fp16: the loss is
// multiplied by the scale before backward, gradients are divided by it before clipping and the
// update; a step whose gradients hold Inf/NaN is skipped and the scale multiplied by
// backoffFactor; after growthInterval clean steps in a row it is multiplied by growthFactor.
struct LossScaling {
    bool enabled = true;
    double initialScale = 65536.0;  // 2^16
    double growthFactor = 2.0;      // > 1
    double backoffFactor = 0.5;     // in (0, 1)
    int growthInterval = 2000;      // >= 1

    // Empty when valid, else a one-line reason.
    std::string invalidReason() const;
    bool operator==(const LossScaling &o) const
    {
        return enabled == o.enabled && initialScale == o.initialScale && growthFactor == o.growthFactor &&
               backoffFactor == o.backoffFactor && growthInterval == o.growthInterval;
    }
    bool operator!=(const LossScaling &o) const { return !(*this == o); }
};

struct Controls {
    double learningRate = 1e-3;
    std::optional<double> clipNorm;  // empty: no clipping
    Precision precision = Precision::FP32;
    LossScaling lossScaling;  // used when precision is FP16
    RecoveryPolicy recovery;
    bool pauseOnNonFinite = false;
    // The fix the scenario's lesson teaches (ScenarioInfo::fix): empty = off, else on with this
    // value (an eps; 0 for a fix that has no value). Ignored by a scenario without one.
    std::optional<double> fix;
};

const char *precisionName(Precision p);  // "fp32", "fp16", "bf16"
// The inverse of precisionName(); empty for any other text.
std::optional<Precision> parsePrecision(const std::string &name);

}  // namespace nanscope
