#pragma once
// What the trainer needs of a model, whether a built-in demo or a user's TorchScript file.
#include "nanscope/records.h"
#include "rules/code_origin.h"

#include <ATen/core/Tensor.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nanscope {

class Probe;

class ModelAdapter {
public:
    virtual ~ModelAdapter() = default;
    // Layers in named_modules() order; ids are indices into this vector.
    virtual const std::vector<Layer> &layers() const = 0;
    // The layer's own parameters (not its children's).
    virtual std::vector<at::Tensor> layerParameters(int layer) const = 0;
    virtual std::vector<at::Tensor> parameters() const = 0;
    virtual std::vector<at::Tensor> buffers() const = 0;
    // `probe` may be null: the model then runs exactly as without NaNScope.
    virtual at::Tensor forward(const at::Tensor &x, Probe *probe) = 0;
    // A model whose forward takes more than its data tensor (forward(x, mask)): the further
    // inputs of this batch, in the forward's order after x.
    virtual at::Tensor forward(const at::Tensor &x, const std::vector<at::Tensor> &sideInputs, Probe *probe)
    {
        if (!sideInputs.empty())
            throw std::invalid_argument("this model takes one input");
        return forward(x, probe);
    }
    virtual void setTraining(bool on) = 0;
    // The layer's own buffers by name (a BatchNorm's running_mean, running_var, num_batches_tracked).
    virtual std::vector<std::pair<std::string, at::Tensor>> layerBuffers(int /*layer*/) const { return {}; }
    // One layer in training or eval mode until the next setTraining(): a replay holds a
    // BatchNorm's batch statistics by running it in eval mode on them.
    virtual void setLayerTraining(int /*layer*/, bool /*on*/) {}
    virtual void toDevice(const std::string &device) = 0;
    // fp16 emulated on the CPU: round every observed layer output through half, so values past
    // 65504 become Inf as they would on a GPU. Returns false when the model cannot (then it runs
    // unrounded).
    virtual bool setHalfEmulation(bool on) { return !on; }
    // "file:line" in the user's source of `op` (a backward node when `inBackward`) in `layer`,
    // when the model carries source locations; empty otherwise.
    virtual std::string sourceOf(const std::string & /*op*/, bool /*inBackward*/, int /*layer*/) const { return {}; }
    // The op-level re-run of a step, at the level of the model's own code: while on, forward
    // checks every node of the model's graph; afterwards the origin of the first non-finite value
    // that left a module (forward), or the forward node whose ops made autograd node `sequence`
    // (backward). Models without a graph of their own code have none.
    virtual void setNodeTracing(bool /*on*/) {}
    virtual std::optional<CodeOrigin> forwardCodeOrigin() const { return std::nullopt; }
    virtual std::optional<CodeOrigin> backwardCodeOrigin(std::uint64_t /*sequence*/) const { return std::nullopt; }
    // Writes the model (with its current weights) where PyTorch can load it again.
    virtual void save(const std::string &path) const
    {
        throw std::runtime_error("this model cannot be saved to '" + path + "'");
    }
};

}  // namespace nanscope
