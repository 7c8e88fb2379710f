#pragma once
// The data a user's model is fed: its first input (the data, whose rows are the samples) and
// any further inputs of its forward (a mask, lengths), synthetic from shapes and dtypes or read
// from tensor files. Every mistake gets a one-line message naming the input by its argument name.
#include "nanscope/run_config.h"

#include <ATen/core/Tensor.h>
#include <torch/csrc/jit/api/module.h>

#include <optional>

#include <string>
#include <vector>

namespace nanscope {

class TorchScriptModel;

struct ModelInputs {
    at::Tensor x;                  // [N, ...]
    std::vector<at::Tensor> side;  // [N, ...] each, in the forward's order after x
    int batchSize = 32;
};

// Throws std::invalid_argument. Synthetic inputs hold kSyntheticBatches batches.
ModelInputs buildModelInputs(const RunConfig &config, TorchScriptModel &model);

// A tensor saved by Python's torch.save or C++ torch::save. `what` names it in messages.
at::Tensor loadTensorFile(const std::string &path, const std::string &what);

// As loadTensorFile, but the file may also hold a tuple or list of tensors (in the forward's
// order) or a dict of them keyed by the forward's argument names (`names`).
std::vector<at::Tensor> loadTensorsFile(const std::string &path, const std::string &what,
                                        const std::vector<std::string> &names);

// The arguments of a module's forward after self: names, defaults (None where there is none) and
// how many have no default. Empty when the module has no forward.
struct ForwardInputs {
    std::vector<std::string> names;
    std::vector<c10::IValue> defaults;
    std::size_t required = 0;
};
ForwardInputs forwardInputs(const torch::jit::Module &module);

// The first module (in named_modules() order) with a matrix or convolution weight: what it takes
// is what the model takes, for the usual models whose first layer reads the input.
struct FirstLayer {
    std::string path, type;
    at::Tensor weight;
    bool isEmbedding() const { return type.find("Embedding") != std::string::npos; }
};
std::optional<FirstLayer> firstWeightedLayer(const torch::jit::Module &module);

// The vocabulary of a model that starts with an nn.Embedding: its num_embeddings; 0 without one.
std::int64_t embeddingVocab(const torch::jit::Module &module);

}  // namespace nanscope
