#pragma once
// The optimizer a run trains with. A scenario chooses its own (SGD or AdamW), a model file trains
// with AdamW; a run's configuration may choose another kind, a momentum (SGD) or a weight decay.
#include <optional>
#include <string>

namespace nanscope {

enum class OptimizerKind { Sgd, Adam, AdamW };
const char *optimizerName(OptimizerKind kind);  // "sgd", "adam", "adamw"
std::optional<OptimizerKind> parseOptimizer(const std::string &name);

struct OptimizerSettings {
    OptimizerKind kind = OptimizerKind::Sgd;
    double momentum = 0.0;     // SGD only
    double weightDecay = 0.0;  // L2 for SGD and Adam, decoupled for AdamW (whose default is 0.01)

    // "sgd", "sgd, momentum 0.9", "adamw, weight decay 0.01"
    std::string label() const;
};

// What a run's configuration may ask for; anything left empty keeps the run's default.
struct OptimizerChoice {
    std::optional<OptimizerKind> kind;
    std::optional<double> momentum;
    std::optional<double> weightDecay;

    bool empty() const { return !kind && !momentum && !weightDecay; }
};

// The default optimizer of a kind, as PyTorch's: AdamW's weight decay is 0.01, the others' 0.
OptimizerSettings defaultOptimizer(OptimizerKind kind);
// `defaultKind` (the scenario's or model file's choice) with `choice` applied. Throws
// std::invalid_argument for a momentum asked of an optimizer other than SGD.
OptimizerSettings resolveOptimizer(OptimizerKind defaultKind, const OptimizerChoice &choice);
// Empty when the values can be used (momentum in [0, 1), weight decay >= 0, both finite), else
// a one-line reason.
std::string invalidOptimizerReason(const OptimizerChoice &choice);

}  // namespace nanscope
