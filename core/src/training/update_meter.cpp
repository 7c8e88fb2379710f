#include "training/update_meter.h"

#include "model/model_adapter.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cmath>
#include <limits>

namespace nanscope {

void UpdateMeter::before(const ModelAdapter &model)
{
    at::NoGradGuard noGrad;
    const std::size_t layers = model.layers().size();
    kept_.resize(layers);
    for (std::size_t l = 0; l < layers; ++l) {
        const std::vector<at::Tensor> params = model.layerParameters(int(l));
        std::vector<at::Tensor> &kept = kept_[l];
        kept.resize(params.size());
        for (std::size_t i = 0; i < params.size(); ++i) {
            if (!kept[i].defined() || !kept[i].is_same_size(params[i]) ||
                kept[i].scalar_type() != params[i].scalar_type() || kept[i].device() != params[i].device())
                kept[i] = at::empty_like(params[i]);
            kept[i].copy_(params[i].detach());
        }
    }
}

void UpdateMeter::after(const ModelAdapter &model, StepRecord &record)
{
    at::NoGradGuard noGrad;
    std::vector<at::Tensor> squares;  // one per layer with parameters
    std::vector<std::size_t> layerOf;
    for (std::size_t l = 0; l < kept_.size() && l < record.layers.size(); ++l) {
        const std::vector<at::Tensor> params = model.layerParameters(int(l));
        if (params.empty() || params.size() != kept_[l].size())
            continue;
        at::Tensor sum;
        for (std::size_t i = 0; i < params.size(); ++i) {
            // In place on the kept copy: before - after, then its norm (no copy in a wider type:
            // a ResNet's 11M weights would be 88 MB of doubles a step), squared in double.
            const at::Tensor norm = kept_[l][i].sub_(params[i].detach()).norm().to(at::kDouble);
            const at::Tensor sq = norm * norm;
            sum = sum.defined() ? sum + sq : sq;
        }
        squares.push_back(sum);
        layerOf.push_back(l);
    }
    if (squares.empty())
        return;
    const at::Tensor host = at::stack(squares).to(at::kCPU);  // one read for every layer
    const double *values = host.data_ptr<double>();
    for (std::size_t j = 0; j < layerOf.size(); ++j) {
        LayerHealth &lh = record.layers[layerOf[j]];
        const double before = lh.params.finiteL2;
        lh.updateRatio = before > 0.0 && std::isfinite(before) ? std::sqrt(values[j]) / before
                                                               : std::numeric_limits<double>::quiet_NaN();
    }
}

}  // namespace nanscope
