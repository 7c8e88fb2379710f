#pragma once
// `nanscope inspect`: one forward pass and the backward pass of the loss on a user's TorchScript
// model, with the per-layer map and the origin of the first non-finite value. Plain values only.
#include "nanscope/non_finite_state.h"
#include "nanscope/records.h"
#include "nanscope/run_config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nanscope {

struct InspectReport {
    std::vector<Layer> layers;
    StepRecord record;  // per-layer health; record.origin is invalid when everything was finite
    std::vector<NonFiniteState> nonFiniteState;
    double loadMillis = 0;        // torch::jit::load
    double instrumentMillis = 0;  // inlining and inserting the observe ops
};

// A guess at the input shape of a model file, from its first linear or convolution layer (for the
// GUI's input dialog and the command line's hint). `shape` is empty when the model does not tell;
// `note` says where the guess comes from. Throws on a file that cannot be loaded.
struct InputGuess {
    std::vector<std::int64_t> shape;
    bool tokenIds = false;  // the model starts with an nn.Embedding: integer ids in [0, vocab)
    std::int64_t vocab = 0;
    std::string note;
    std::vector<std::string> inputNames;  // forward's arguments after self: more than one asks for each
    std::size_t requiredInputs = 1;       // those without a default
};
InputGuess guessInputShape(const std::string &modelPath);

// Uses config.modelPath and its data fields (inputShape or inputsPath, targetsPath, loss, seed,
// device). Throws std::runtime_error / std::invalid_argument with a one-line message.
InspectReport inspectModel(const RunConfig &config);

}  // namespace nanscope
