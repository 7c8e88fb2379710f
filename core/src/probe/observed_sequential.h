#pragma once
// The demo models: a sequence of named children (paths as named_modules() spells them) that
// reports each child's input and output to the probe. C++ modules have no forward hooks, so the
// container does the observing.
#include "model_api/model_adapter.h"
#include "probe/probe.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>

#include <memory>
#include <string>
#include <vector>

namespace nanscope {

class ObservedSequential final : public ModelAdapter {
public:
    explicit ObservedSequential(std::string rootType);
    void add(const std::string &name, torch::nn::AnyModule module);
    // Keeps the child in eval mode whatever setTraining() says (a frozen BatchNorm, say).
    void freeze(const std::string &name) { frozen_.push_back(name); }
    // Call after the last add(): fixes the layer table.
    void finalize();

    const std::vector<Layer> &layers() const override { return layers_; }
    std::vector<at::Tensor> layerParameters(int layer) const override;
    std::vector<at::Tensor> parameters() const override;
    std::vector<at::Tensor> buffers() const override;
    at::Tensor forward(const at::Tensor &x, Probe *probe) override;
    void setTraining(bool on) override;
    std::vector<std::pair<std::string, at::Tensor>> layerBuffers(int layer) const override;
    void setLayerTraining(int layer, bool on) override;
    void toDevice(const std::string &device) override;
    bool setHalfEmulation(bool on) override
    {
        halfEmulation_ = on;
        return true;
    }

    torch::nn::Module &root() { return *root_; }

private:
    std::shared_ptr<torch::nn::Module> root_;
    std::vector<std::pair<std::string, torch::nn::AnyModule>> children_;
    std::vector<bool> plainRelu_;  // per child: a ReLU that is not in place
    // Per child: a plain ReLU takes its output next, directly or through Flattens (which pass the
    // same values on), so its scan sums the positive squares that ReLU's health follows from.
    std::vector<bool> feedsRelu_;
    std::vector<Probe::InputGradient> inputGradient_;  // per child
    std::vector<Layer> layers_;
    std::vector<std::string> frozen_;
    std::vector<std::vector<at::Tensor>> ownParameters_;
    bool halfEmulation_ = false;
};

// "torch::nn::LinearImpl" -> "Linear"
std::string shortTypeName(const std::string &cppName);

}  // namespace nanscope
