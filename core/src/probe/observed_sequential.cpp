#include "probe/observed_sequential.h"

#include "model_api/autocast_scope.h"
#include "probe/probe.h"

#include <torch/torch.h>

namespace nanscope {

namespace {

// Each input lies in at most one window: the backward pass puts each output gradient in a place
// of its own.
template <std::size_t D> bool windowsApart(const torch::nn::MaxPoolOptions<D> &o)
{
    for (std::size_t d = 0; d < D; ++d)
        if ((*o.stride())[d] < (*o.dilation())[d] * ((*o.kernel_size())[d] - 1) + 1)
            return false;
    return true;
}

template <typename Pool> bool isMaxPoolWithWindowsApart(const std::shared_ptr<torch::nn::Module> &m)
{
    const auto pool = std::dynamic_pointer_cast<Pool>(m);
    return pool && windowsApart(pool->options);
}

Probe::InputGradient inputGradientOf(const std::shared_ptr<torch::nn::Module> &m)
{
    if (std::dynamic_pointer_cast<torch::nn::FlattenImpl>(m))
        return Probe::InputGradient::SameValues;
    if (isMaxPoolWithWindowsApart<torch::nn::MaxPool1dImpl>(m) ||
        isMaxPoolWithWindowsApart<torch::nn::MaxPool2dImpl>(m) ||
        isMaxPoolWithWindowsApart<torch::nn::MaxPool3dImpl>(m))
        return Probe::InputGradient::SameValuesAmongZeros;
    return Probe::InputGradient::Scanned;
}

}  // namespace

std::string shortTypeName(const std::string &cppName)
{
    std::string n = cppName;
    const auto colon = n.rfind("::");
    if (colon != std::string::npos)
        n = n.substr(colon + 2);
    if (n.size() > 4 && n.compare(n.size() - 4, 4, "Impl") == 0)
        n.resize(n.size() - 4);
    return n;
}

ObservedSequential::ObservedSequential(std::string rootType)
    : root_(std::make_shared<torch::nn::Module>(std::move(rootType)))
{
}

void ObservedSequential::add(const std::string &name, torch::nn::AnyModule module)
{
    root_->register_module(name, module.ptr());
    const auto relu = std::dynamic_pointer_cast<torch::nn::ReLUImpl>(module.ptr());
    plainRelu_.push_back(relu && !relu->options.inplace());
    inputGradient_.push_back(inputGradientOf(module.ptr()));
    children_.emplace_back(name, std::move(module));
}

void ObservedSequential::finalize()
{
    feedsRelu_.assign(children_.size(), false);
    for (std::size_t i = children_.size(); i-- > 1;)
        feedsRelu_[i - 1] = plainRelu_[i] || (inputGradient_[i] == Probe::InputGradient::SameValues && feedsRelu_[i]);
    layers_.clear();
    ownParameters_.clear();
    // named_modules() gives the root as "" and descendants in pre-order: that is the layer table.
    for (const auto &item : root_->named_modules()) {
        Layer l;
        l.id = int(layers_.size());
        l.path = item.key();
        l.type = l.path.empty() ? root_->name() : shortTypeName(item.value()->name());
        const auto dot = l.path.rfind('.');
        const std::string parentPath = dot == std::string::npos ? std::string() : l.path.substr(0, dot);
        for (const Layer &p : layers_)
            if (!l.path.empty() && p.path == parentPath)
                l.parent = p.id;
        layers_.push_back(l);
        ownParameters_.push_back(item.value()->parameters(/*recurse=*/false));
    }
}

std::vector<at::Tensor> ObservedSequential::layerParameters(int layer) const { return ownParameters_[layer]; }

std::vector<at::Tensor> ObservedSequential::parameters() const { return root_->parameters(); }

std::vector<at::Tensor> ObservedSequential::buffers() const { return root_->buffers(); }

at::Tensor ObservedSequential::forward(const at::Tensor &input, Probe *probe)
{
    at::Tensor x = input;
    // Children are layers 1..n in registration order (pre-order of a flat container).
    int id = 1;
    for (std::size_t i = 0; i < children_.size(); ++i) {
        at::Tensor y = children_[i].second.forward(x);
        if (halfEmulation_)
            y = roundThroughHalf(y);  // what the layer's fp16 output would hold on a GPU
        // A ReLU's health follows from its input's scan (no second read) when that scan summed
        // the positive squares, which only then are worth their cost.
        const PositiveSquares squares = i < feedsRelu_.size() && feedsRelu_[i] && !halfEmulation_
                                            ? PositiveSquares::Summed
                                            : PositiveSquares::Skipped;
        if (probe && plainRelu_[i] && !halfEmulation_)
            probe->observeRelu(id, x, y, squares);
        else if (probe)  // (fp16 rounding's backward changes the gradient: nothing follows)
            probe->observe(id, x, y, halfEmulation_ ? Probe::InputGradient::Scanned : inputGradient_[i], squares);
        x = y;
        ++id;
    }
    if (probe)
        probe->observe(0, input, x);
    return x;
}

void ObservedSequential::setTraining(bool on)
{
    root_->train(on);
    for (auto &child : children_)
        for (const std::string &name : frozen_)
            if (child.first == name)
                child.second.ptr()->eval();
}

std::vector<std::pair<std::string, at::Tensor>> ObservedSequential::layerBuffers(int layer) const
{
    std::vector<std::pair<std::string, at::Tensor>> out;
    for (const auto &item : root_->named_modules()[std::size_t(layer)].value()->named_buffers(/*recurse=*/false))
        out.emplace_back(item.key(), item.value());
    return out;
}

void ObservedSequential::setLayerTraining(int layer, bool on)
{
    root_->named_modules()[std::size_t(layer)].value()->train(on);
}

void ObservedSequential::toDevice(const std::string &device)
{
    root_->to(torch::Device(device));
    for (std::size_t i = 0; i < layers_.size(); ++i)
        ownParameters_[i].clear();
    std::size_t i = 0;
    for (const auto &item : root_->named_modules())
        ownParameters_[i++] = item.value()->parameters(false);
}

}  // namespace nanscope
