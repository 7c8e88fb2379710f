#include "nanscope/optimizer.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace nanscope {

const char *optimizerName(OptimizerKind kind)
{
    switch (kind) {
    case OptimizerKind::Sgd: return "sgd";
    case OptimizerKind::Adam: return "adam";
    case OptimizerKind::AdamW: return "adamw";
    }
    return "sgd";
}

std::optional<OptimizerKind> parseOptimizer(const std::string &name)
{
    for (OptimizerKind k : {OptimizerKind::Sgd, OptimizerKind::Adam, OptimizerKind::AdamW})
        if (name == optimizerName(k))
            return k;
    return std::nullopt;
}

std::string OptimizerSettings::label() const
{
    std::ostringstream s;
    s << optimizerName(kind);
    if (momentum != 0.0)
        s << ", momentum " << momentum;
    if (weightDecay != 0.0)
        s << ", weight decay " << weightDecay;
    return s.str();
}

OptimizerSettings defaultOptimizer(OptimizerKind kind)
{
    OptimizerSettings s;
    s.kind = kind;
    s.weightDecay = kind == OptimizerKind::AdamW ? 0.01 : 0.0;
    return s;
}

OptimizerSettings resolveOptimizer(OptimizerKind defaultKind, const OptimizerChoice &choice)
{
    OptimizerSettings s = defaultOptimizer(choice.kind.value_or(defaultKind));
    if (choice.momentum && *choice.momentum != 0.0 && s.kind != OptimizerKind::Sgd)
        throw std::invalid_argument(std::string("momentum is a setting of sgd; this run's optimizer is ") +
                                    optimizerName(s.kind) + " (Adam's betas are its own)");
    s.momentum = choice.momentum.value_or(0.0);
    s.weightDecay = choice.weightDecay.value_or(s.weightDecay);
    return s;
}

std::string invalidOptimizerReason(const OptimizerChoice &choice)
{
    if (choice.momentum && !(std::isfinite(*choice.momentum) && *choice.momentum >= 0.0 && *choice.momentum < 1.0))
        return "the momentum must lie in [0, 1)";
    if (choice.weightDecay && !(std::isfinite(*choice.weightDecay) && *choice.weightDecay >= 0.0))
        return "the weight decay must be a finite number >= 0";
    return {};
}

}  // namespace nanscope
