// The catalogue of built-in scenarios: ids, titles and default settings, without LibTorch, so that
// a run's configuration is checked and resolved by anything that reads run files. Each scenario's
// model and data are built in scenarios/scenarios.cpp.
#include "nanscope/scenario.h"

#include "contract/translatable.h"

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
        {"large-lr-ce",
         QT_TRANSLATE_NOOP("nanscope::core",
                           "Huge learning rate with cross-entropy: the loss oscillates but stays finite"),
         makeControls(100.0), 200},
        {"large-lr-mse",
         QT_TRANSLATE_NOOP("nanscope::core",
                           "Learning rate above 2/curvature on an MSE regression: divergence to Inf, then NaN"),
         makeControls(1.0), 100},
        {"nan-input",
         QT_TRANSLATE_NOOP("nanscope::core",
                           "A NaN and an Inf in the training data poison BatchNorm and then every weight"),
         makeControls(1e-3), 60},
        {"log-zero",
         QT_TRANSLATE_NOOP("nanscope::core", "log() of softmax probabilities that underflowed to exactly 0"),
         makeControls(0.1),
         30,
         {QT_TRANSLATE_NOOP("nanscope::core", "stable log"), "eps", 1e-7, false,
          QT_TRANSLATE_NOOP("nanscope::core",
                            "clamps the probabilities to at least eps before the loss takes their log")}},
        {"bn-constant",
         QT_TRANSLATE_NOOP("nanscope::core",
                           "BatchNorm with eps=0 over a feature that is constant across the batch: 0/0"),
         makeControls(0.1),
         30,
         {QT_TRANSLATE_NOOP("nanscope::core", "BatchNorm eps"), "eps", 1e-5, false,
          QT_TRANSLATE_NOOP("nanscope::core", "sets BatchNorm's eps, added to the variance before the division")}},
        {"sqrt-backward",
         QT_TRANSLATE_NOOP("nanscope::core", "sqrt at exactly 0: a finite forward pass, NaN born in backward"),
         makeControls(0.01),
         30,
         {QT_TRANSLATE_NOOP("nanscope::core", "eps in the sqrt"), "eps", 1e-8, false,
          QT_TRANSLATE_NOOP("nanscope::core", "takes sqrt(sum(x^2) + eps), whose derivative is finite at 0")}},
        {"exploding-deep",
         QT_TRANSLATE_NOOP("nanscope::core",
                           "30-layer ReLU MLP with a too-large init: activations overflow deep in the net"),
         makeControls(1e-3),
         10,
         {QT_TRANSLATE_NOOP("nanscope::core", "He init"), "", 0.0, true,
          QT_TRANSLATE_NOOP("nanscope::core", "initialises each layer with He's std sqrt(2 / fan_in) instead of 4")}},
        {"safe-training",
         QT_TRANSLATE_NOOP("nanscope::core",
                           "The nan-input data trained with the full recovery policy: quarantine, clip, roll back"),
         makeControls(1e-3, 5.0, RecoveryPolicy::full()), 200},
        {"fp16-overflow",
         QT_TRANSLATE_NOOP(
             "nanscope::core",
             "Prices in dollars as fp16 regression targets: the loss scaler backs off, then outputs pass 65504"),
         makeControls(0.05, {}, {}, Precision::FP16),
         100,
         {QT_TRANSLATE_NOOP("nanscope::core", "normalised targets"), "", 0.0, true,
          QT_TRANSLATE_NOOP("nanscope::core", "trains on (price - mean) / std instead of dollars")}},
        {"softmax-overflow",
         QT_TRANSLATE_NOOP("nanscope::core",
                           "A hand-written softmax exp(x) / sum(exp(x)) over logits past 88: Inf / Inf in forward"),
         makeControls(0.01),
         30,
         {QT_TRANSLATE_NOOP("nanscope::core", "stable softmax"), "", 0.0, false,
          QT_TRANSLATE_NOOP("nanscope::core",
                            "subtracts each row's largest logit before exp and takes the log in log space")}},
        {"zero-division",
         QT_TRANSLATE_NOOP("nanscope::core",
                           "ReLU scores divided by their sum: a sample with no positive score gives 0 / 0"),
         makeControls(0.1),
         30,
         {QT_TRANSLATE_NOOP("nanscope::core", "eps in the divisor"), "eps", 1e-6, false,
          QT_TRANSLATE_NOOP("nanscope::core", "divides by sum + eps")}},
        {"hidden-by-nan-to-num",
         QT_TRANSLATE_NOOP(
             "nanscope::core",
             "nan_to_num hides bad sensor data: the loss stays finite while the input scale's weights turn NaN"),
         makeControls(0.05), 100},
        {"negative-variance",
         QT_TRANSLATE_NOOP(
             "nanscope::core",
             "A predicted variance with nothing to keep it positive: sqrt of a negative number in forward"),
         makeControls(0.05),
         100,
         {QT_TRANSLATE_NOOP("nanscope::core", "positive variance"), "", 0.0, false,
          QT_TRANSLATE_NOOP("nanscope::core", "computes the variance as softplus(v) + 1e-6, positive for any v")}},
        {"zero-denominator",
         QT_TRANSLATE_NOOP("nanscope::core",
                           "Seconds per click of a session that never clicked: a positive number divided by 0 is Inf"),
         makeControls(0.05),
         60,
         {QT_TRANSLATE_NOOP("nanscope::core", "at least one click"), "", 0.0, false,
          QT_TRANSLATE_NOOP("nanscope::core", "divides by max(clicks, 1), so a session without a click counts one")}},
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

ScenarioFix scenarioFix(const std::string &scenario)
{
    const ScenarioInfo *info = findScenario(scenario);
    return info ? info->fix : ScenarioFix{};
}

}  // namespace nanscope
