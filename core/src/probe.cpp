#include "probe.h"

#include "model_adapter.h"

#include <ATen/ATen.h>

namespace nanscope {

void Probe::beginStep(const ModelAdapter &model, StepRecord *record)
{
    record_ = record;
    record_->layers.assign(model.layers().size(), LayerHealth{});
    collector_.clear();
    forwardOrder_.clear();
    backwardOrder_.clear();
    inputSources_.clear();
    recentOutputs_.clear();
    inputScratch_.assign(model.layers().size(), TensorHealth{});
}

void Probe::observe(int layer, const at::Tensor &input, const at::Tensor &output)
{
    LayerHealth &lh = record_->layers[layer];
    forwardOrder_.push_back(layer);
    // A layer's input is usually the previous layer's output, already scanned: reuse that.
    InputSource source{layer, -1};
    if (input.defined() && at::isFloatingType(input.scalar_type())) {
        for (auto it = recentOutputs_.rbegin(); it != recentOutputs_.rend(); ++it)
            if (it->first == input.unsafeGetTensorImpl()) {
                source.fromLayer = it->second;
                break;
            }
        if (source.fromLayer < 0)
            collector_.record(&inputScratch_[layer], input.detach());
        inputSources_.push_back(source);
    }
    collector_.record(&lh.forward, output.detach());
    recentOutputs_.emplace_back(output.unsafeGetTensorImpl(), layer);
    if (output.requires_grad()) {
        TensorHealth *slot = &lh.grad;
        output.register_hook([this, slot, layer](const at::Tensor &grad) {
            collector_.record(slot, grad);
            backwardOrder_.push_back(layer);
        });
    }
}

void Probe::observeLoss(const at::Tensor &loss) { collector_.record(&record_->lossHealth, loss.detach()); }

void Probe::observeParameters(const ModelAdapter &model)
{
    for (std::size_t i = 0; i < model.layers().size(); ++i)
        for (const at::Tensor &p : model.layerParameters(int(i)))
            collector_.record(&record_->layers[i].params, p.detach());
}

void Probe::observeParameterGradients(const ModelAdapter &model)
{
    for (std::size_t i = 0; i < model.layers().size(); ++i)
        for (const at::Tensor &p : model.layerParameters(int(i)))
            if (p.grad().defined())
                collector_.record(&record_->layers[i].paramGrads, p.grad());
}

void Probe::finishStep()
{
    collector_.resolve();
    for (const InputSource &src : inputSources_) {
        const TensorHealth &in = src.fromLayer >= 0 ? record_->layers[src.fromLayer].forward : inputScratch_[src.layer];
        record_->layers[src.layer].inputFinite = in.nonFinite() == 0;
    }
    recentOutputs_.clear();
}

}  // namespace nanscope
