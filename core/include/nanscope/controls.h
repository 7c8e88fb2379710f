#pragma once
// The user's live controls, copied by value into the session and applied at the next step.
#include <optional>

namespace nanscope {

enum class Precision { FP32, FP16, BF16 };

struct RecoveryPolicy {
    bool quarantineSamples = false;   // drop only the non-finite samples of a batch, by index
    bool zeroNonFiniteGrads = false;  // replace NaN/Inf gradient entries with 0 before the update
    bool rollbackOnNonFiniteLoss = false;  // restore the last checked-finite state, halve the LR
    int maxRetries = 3;               // rollbacks in a row before the run stops

    bool any() const { return quarantineSamples || zeroNonFiniteGrads || rollbackOnNonFiniteLoss; }
    static RecoveryPolicy none() { return {}; }
    static RecoveryPolicy skipOnly() { RecoveryPolicy p; p.quarantineSamples = true; return p; }
    static RecoveryPolicy full() {
        RecoveryPolicy p;
        p.quarantineSamples = p.zeroNonFiniteGrads = p.rollbackOnNonFiniteLoss = true;
        return p;
    }
};

struct Controls {
    double learningRate = 1e-3;
    std::optional<double> clipNorm;  // empty: no clipping
    Precision precision = Precision::FP32;
    RecoveryPolicy recovery;
    bool pauseOnNonFinite = false;
};

const char *precisionName(Precision p);

}  // namespace nanscope
