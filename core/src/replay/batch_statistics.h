#pragma once
// A BatchNorm in training mode normalises each sample by the statistics of its whole batch, so a
// subset of the batch is normalised differently from the step that failed. Held statistics undo
// that: the whole batch's mean and variance, measured once, then used for every subset (the layer
// in eval mode on them), so each row passes the layer as it did in the step.
#include "model_api/model_adapter.h"

#include <functional>
#include <string>
#include <vector>

namespace nanscope {

struct BatchStatistic {
    int layer = 0;
    std::string path;
    at::Tensor mean, var;  // the batch's, as training mode normalises with them (biased variance)
    bool finite = false;   // false: a sample's NaN/Inf reached them; they cannot be held
};

// The statistics of every BatchNorm in training mode, measured on the batch `computeStep` computes
// (it must put the buffers back where they were first, then run the step once). `step` is that
// step's record: its layer sizes give the number of values each statistic averages. Layers in
// eval mode (frozen) couple nothing and are left out. The model's buffers are left changed.
std::vector<BatchStatistic>
measureBatchStatistics(ModelAdapter &model, const StepRecord &step,
                       const std::function<void(const std::function<void()> &)> &computeStep);

// The finite statistics put in the layers' running buffers, the layers in eval mode: call after
// the step's buffers are restored and before its forward pass.
void holdBatchStatistics(ModelAdapter &model, const std::vector<BatchStatistic> &statistics);
// The layers back in training mode.
void releaseBatchStatistics(ModelAdapter &model, const std::vector<BatchStatistic> &statistics);

}  // namespace nanscope
