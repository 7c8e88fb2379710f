// The catalogue of built-in scenarios: ids, titles and default settings, without LibTorch, so that
// a run's configuration is checked and resolved by anything that reads run files. Each scenario's
// model and data are built in scenarios/scenarios.cpp.
#include "nanscope/scenario.h"

#include <optional>

namespace nanscope {

namespace {

Controls makeControls(double lr, std::optional<double> clip = {}, RecoveryPolicy policy = {},
                      Precision precision = Precision::FP32)
{
    Controls c;
    c.learningRate = lr;
    c.clipNorm = clip;
    c.recovery = policy;
    c.precision = precision;
    return c;
}

}  // namespace

const std::vector<ScenarioInfo> &scenarios()
{
    static const std::vector<ScenarioInfo> list = {
        {"large-lr-ce", "Huge learning rate with cross-entropy: the loss oscillates but stays finite", makeControls(100.0),
         200},
        {"large-lr-mse", "Learning rate above 2/curvature on an MSE regression: divergence to Inf, then NaN",
         makeControls(1.0), 100},
        {"nan-input", "A NaN and an Inf in the training data poison BatchNorm and then every weight", makeControls(1e-3),
         60},
        {"log-zero", "log() of softmax probabilities that underflowed to exactly 0", makeControls(0.1), 30},
        {"bn-constant", "BatchNorm with eps=0 over a feature that is constant across the batch: 0/0", makeControls(0.1),
         30},
        {"sqrt-backward", "sqrt at exactly 0: a finite forward pass, NaN born in backward", makeControls(0.01), 30},
        {"exploding-deep", "30-layer ReLU MLP with a too-large init: activations overflow deep in the net",
         makeControls(1e-3), 10},
        {"safe-training", "The nan-input data trained with the full recovery policy: quarantine, clip, roll back",
         makeControls(1e-3, 5.0, RecoveryPolicy::full()), 200},
        {"fp16-overflow", "Prices in dollars as fp16 regression targets: the loss scaler backs off, then outputs pass 65504",
         makeControls(0.05, {}, {}, Precision::FP16), 100},
        {"softmax-overflow", "A hand-written softmax exp(x) / sum(exp(x)) over logits past 88: Inf / Inf in forward",
         makeControls(0.01), 30},
        {"zero-division", "ReLU scores divided by their sum: a sample with no positive score gives 0 / 0",
         makeControls(0.1), 30},
        {"hidden-by-nan-to-num",
         "nan_to_num hides bad sensor data: the loss stays finite while the input scale's weights turn NaN",
         makeControls(0.05), 100},
    };
    return list;
}

const ScenarioInfo *findScenario(const std::string &id)
{
    for (const ScenarioInfo &info : scenarios())
        if (info.id == id)
            return &info;
    return nullptr;
}

}  // namespace nanscope
