#pragma once
// A bounded ring of training states that were checked finite: parameters, buffers (BatchNorm
// running statistics) and the optimizer's state. Restoring only the parameters is no rollback.
#include <ATen/core/Tensor.h>

#include <deque>
#include <string>
#include <vector>

namespace torch::optim {
class Optimizer;
}

namespace nanscope {

class ModelAdapter;

struct Snapshot {
    int step = 0;  // the state at the start of this step
    std::vector<at::Tensor> parameters;
    std::vector<at::Tensor> buffers;
    std::string optimizerState;  // serialized, so every moment tensor is a deep copy
    double learningRate = 0;
    double lossScale = 1;
    int growthTracker = 0;
};

Snapshot takeSnapshot(int step, const ModelAdapter &model, const std::vector<at::Tensor> &buffers,
                      torch::optim::Optimizer &optimizer);
void restoreSnapshot(const Snapshot &s, const ModelAdapter &model, torch::optim::Optimizer &optimizer);

class SnapshotRing {
public:
    explicit SnapshotRing(std::size_t capacity = 4) : capacity_(capacity ? capacity : 1) {}
    void push(Snapshot s);
    const Snapshot *newest() const { return ring_.empty() ? nullptr : &ring_.back(); }
    std::size_t size() const { return ring_.size(); }
    void clear() { ring_.clear(); }

private:
    std::size_t capacity_;
    std::deque<Snapshot> ring_;
};

// The optimizer's state (every moment tensor) as bytes, and back.
std::string saveOptimizer(torch::optim::Optimizer &optimizer);
void loadOptimizer(torch::optim::Optimizer &optimizer, const std::string &state);

// Copies of `tensors` that later writes to the originals do not touch.
std::vector<at::Tensor> cloneAll(const std::vector<at::Tensor> &tensors);
void copyInto(const std::vector<at::Tensor> &targets, const std::vector<at::Tensor> &values);

}  // namespace nanscope
