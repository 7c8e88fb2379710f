#pragma once
// How far each update moved each layer's weights: |w after - w before| / |w before| over the
// layer's own parameters. The usual range is about 1e-4 to 1e-2 a step; far above it the run is
// about to diverge, far below it the updates are lost to rounding.
//
// It must cost next to nothing beside a step of a small model. On the CPU, with float parameters,
// two plain loops do it: one copies the parameters aside before the update, one sums each layer's
// squared differences after it (tensor ops cost a dispatch each, and a segment reduction over a
// deep model cost a third of its map). Elsewhere the parameters are copied into one flat buffer
// before the update and once more after it, subtracted and squared in place, and summed by layer
// in one segment reduction: six ops whatever the model, and one host read.
#include "nanscope/records.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace nanscope {

class ModelAdapter;

class UpdateMeter {
public:
    // Just before the optimizer's step: keeps the parameters as they are.
    void before(const ModelAdapter &model);
    // Just after it: each layer's update ratio into the record, whose parameter health (taken at
    // the start of the step) gives |w before|.
    void after(StepRecord &record);

private:
    // Flat views of every parameter, in layer order, kept while the parameters keep their storage.
    bool refreshViews(const ModelAdapter &model);

    void afterOnHost(StepRecord &record);
    // Each layer's ratio from the sum of its squared differences (squares[j]: layer layerOf_[j]).
    void setRatios(StepRecord &record, const double *squares) const;

    std::vector<at::Tensor> views_;
    bool onHost_ = false;                 // every parameter is a CPU float tensor: the plain loops
    std::vector<float> hostBefore_;       // their values before the update, one after the other
    std::vector<std::size_t> viewLayer_;  // each view's index into lengths_ and layerOf_
    std::vector<const void *> storage_;   // each view's data pointer, to notice a parameter replaced
    std::vector<std::int64_t> lengths_;   // values a layer with parameters holds
    std::vector<std::size_t> layerOf_;    // those layers' ids
    at::Tensor before_, after_;
    at::Tensor segmentLengths_;  // lengths_, as the segment reduction takes them
};

}  // namespace nanscope
