#pragma once
// How far each update moved each layer's weights: |w after - w before| / |w before| over the
// layer's own parameters. The usual range is about 1e-4 to 1e-2 a step; far above it the run is
// about to diverge, far below it the layer has stopped learning. Costs one copy of the parameters
// a step (kept in buffers reused from step to step) and one host read for all layers.
#include "nanscope/records.h"

#include <ATen/core/Tensor.h>

#include <vector>

namespace nanscope {

class ModelAdapter;

class UpdateMeter {
public:
    // Just before the optimizer's step: keeps the parameters as they are.
    void before(const ModelAdapter &model);
    // Just after it: each layer's update ratio into the record, whose parameter health (taken at
    // the start of the step) gives |w before|.
    void after(const ModelAdapter &model, StepRecord &record);

private:
    std::vector<std::vector<at::Tensor>> kept_;  // by layer, as layerParameters() lists them
};

}  // namespace nanscope
