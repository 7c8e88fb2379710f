#include "training/snapshot.h"

#include "model_api/model_adapter.h"

#include <torch/optim/optimizer.h>
#include <torch/serialize.h>

#include <sstream>

namespace nanscope {

std::vector<at::Tensor> cloneAll(const std::vector<at::Tensor> &tensors)
{
    std::vector<at::Tensor> out;
    out.reserve(tensors.size());
    for (const at::Tensor &t : tensors)
        out.push_back(t.detach().clone());
    return out;
}

void copyInto(const std::vector<at::Tensor> &targets, const std::vector<at::Tensor> &values)
{
    at::NoGradGuard noGrad;
    for (std::size_t i = 0; i < targets.size() && i < values.size(); ++i)
        targets[i].detach().copy_(values[i]);
}

Snapshot takeSnapshot(int step, const ModelAdapter &model, const std::vector<at::Tensor> &buffers,
                      torch::optim::Optimizer &optimizer)
{
    Snapshot s;
    s.step = step;
    s.parameters = cloneAll(model.parameters());
    s.buffers = cloneAll(buffers);
    s.optimizerState = saveOptimizer(optimizer);
    return s;
}

void restoreSnapshot(const Snapshot &s, const ModelAdapter &model, torch::optim::Optimizer &optimizer)
{
    copyInto(model.parameters(), s.parameters);
    copyInto(model.buffers(), s.buffers);
    loadOptimizer(optimizer, s.optimizerState);
}

std::string saveOptimizer(torch::optim::Optimizer &optimizer)
{
    std::ostringstream out;
    torch::save(optimizer, out);
    return out.str();
}

void loadOptimizer(torch::optim::Optimizer &optimizer, const std::string &state)
{
    std::istringstream in(state);
    torch::load(optimizer, in);
}

void SnapshotRing::push(Snapshot s)
{
    ring_.push_back(std::move(s));
    while (ring_.size() > capacity_)
        ring_.pop_front();
}

}  // namespace nanscope
