#include "probe/probe.h"

#include "model_api/model_adapter.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>

#include <functional>

namespace nanscope {

void Probe::beginStep(const ModelAdapter &model, StepRecord *record)
{
    record_ = record;
    record_->layers.assign(model.layers().size(), LayerHealth{});
    collector_.clear();
    scannedBeforeStep_ = collector_.hostElementsScanned();
    forwardOrder_.clear();
    backwardOrder_.clear();
    inputSources_.clear();
    recentOutputs_.clear();
    callSlots_.clear();
    calls_.clear();
    backwardCallOrder_.clear();
    backwardCalls_.clear();
    forgetLast();
    inputScratch_.assign(model.layers().size(), TensorHealth{});
    gradientSources_.assign(model.layers().size(), GradientSource{});
    gradientsMeasured_.assign(model.layers().size(), HealthCollector::Measured{});
}

struct Probe::GradTargets {
    struct Target {
        TensorHealth *slot;
        int layer;
        int call;  // in callSlots_
    };
    std::vector<Target> slots;
};

namespace {

class GradientPreHook final : public torch::autograd::FunctionPreHook {
public:
    GradientPreHook(std::function<void(const at::Tensor &)> onGrad, std::uint32_t index)
        : onGrad_(std::move(onGrad)), index_(index)
    {
    }
    torch::autograd::variable_list operator()(const torch::autograd::variable_list &grads) override
    {
        if (index_ < grads.size() && grads[index_].defined())
            onGrad_(grads[index_]);
        return grads;
    }

private:
    std::function<void(const at::Tensor &)> onGrad_;
    std::uint32_t index_;
};

}  // namespace

void Probe::hookGradient(const std::shared_ptr<torch::autograd::Node> &node, std::uint32_t index, TensorHealth *slot,
                         int layer)
{
    const int call = int(callSlots_.size()) - 1;  // the call recordForward() just added
    if (lastHookTargets_ && lastHookNode_ == node && lastHookIndex_ == index) {
        lastHookTargets_->slots.push_back({slot, layer, call});  // one scan feeds both
        return;
    }
    auto targets = std::make_shared<GradTargets>();
    targets->slots.push_back({slot, layer, call});
    node->add_pre_hook(std::make_unique<GradientPreHook>(
        [this, targets](const at::Tensor &grad) { recordGradient(*targets, grad); }, index));
    lastHookNode_ = node;
    lastHookIndex_ = index;
    lastHookTargets_ = targets;
}

namespace {

// `t` holds exactly what `held` held when its version was `version`: the same tensor, or a view of
// all of it laid out the same way (Flatten's output is its input, reshaped).
bool sameValues(const at::Tensor &held, std::int64_t version, const at::Tensor &t)
{
    if (!held.defined() || t._version() != version)
        return false;
    if (held.is_same(t))
        return true;
    return held.data_ptr() == t.data_ptr() && held.numel() == t.numel() && held.scalar_type() == t.scalar_type() &&
           held.device() == t.device() && held.is_contiguous() && t.is_contiguous();
}

}  // namespace

void Probe::observeAtProducer(int layer, const at::Tensor &input, const at::Tensor &output)
{
    recordForward(layer, input, output);
    if (!output.requires_grad())
        return;
    TensorHealth *slot = &record_->layers[layer].grad;
    // A view rewritten in place later (linear's [B,T,F] output is a view of its addmm result)
    // gets a regenerated grad_fn, and the node it had when observed never runs. Its base's node
    // does, with the gradient of the base before the in-place op: read the view's part of it.
    const at::Tensor base = output.is_view() ? at::Tensor(output._base()) : at::Tensor();
    if (base.defined() && base.grad_fn()) {
        const std::vector<std::int64_t> sizes = output.sizes().vec(), strides = output.strides().vec();
        const std::vector<std::int64_t> baseSizes = base.sizes().vec(), baseStrides = base.strides().vec();
        const std::int64_t offset = output.storage_offset() - base.storage_offset();
        const int call = int(callSlots_.size()) - 1;
        lastHookTargets_.reset();
        base.grad_fn()->add_pre_hook(std::make_unique<GradientPreHook>(
            [=](const at::Tensor &grad) {
                at::Tensor laidOut = grad;
                if (grad.strides().vec() != baseStrides) {
                    laidOut = at::empty_strided(baseSizes, baseStrides, grad.options());
                    laidOut.copy_(grad);
                }
                recordCallGradient(call, collector_.record(slot, laidOut.as_strided(sizes, strides,
                                                                                      laidOut.storage_offset() + offset)));
                backwardOrder_.push_back(layer);
            },
            base.output_nr()));
        return;
    }
    if (const auto node = output.grad_fn())
        hookGradient(node, output.output_nr(), slot, layer);
}

void Probe::observe(int layer, const at::Tensor &input, const at::Tensor &output, InputGradient inputGradient,
                    PositiveSquares outputSquares)
{
    recordForward(layer, input, output, nullptr, outputSquares);
    hookOutputGradient(layer, output);
    // The layer that produced `input` (found by recordForward) takes its gradient from this one's.
    const bool fromLayer =
        !inputSources_.empty() && inputSources_.back().layer == layer && inputSources_.back().fromLayer >= 0;
    if (inputGradient == InputGradient::Scanned || !fromLayer || !output.requires_grad())
        return;
    GradientSource &source = gradientSources_[std::size_t(inputSources_.back().fromLayer)];
    source.layer = layer;
    source.how = inputGradient;
    source.numel = input.numel();
    source.outputVersion = output.unsafeGetTensorImpl()->version_counter();
    source.versionSeen = source.outputVersion.current_version();
}

HealthCollector::Measured Probe::derivedGradient(int layer, const at::Tensor &grad) const
{
    if (std::size_t(layer) >= gradientSources_.size() || gradientSources_[std::size_t(layer)].layer < 0)
        return {};  // (a graph kept past its step: the map has changed since)
    const GradientSource &source = gradientSources_[std::size_t(layer)];
    // Only from a gradient scanned on the host this step (a device's statistics are read at the
    // end of the step), of an output no in-place op rewrote since.
    const HealthCollector::Measured &later = gradientsMeasured_[std::size_t(source.layer)];
    if (!later.valid || later.segment >= 0 || grad.numel() != source.numel ||
        source.outputVersion.current_version() != source.versionSeen)
        return {};
    HealthCollector::Measured m;
    m.valid = true;
    m.host = source.how == InputGradient::SameValues ? later.host : amongZerosHealth(later.host, grad.numel());
    return m;
}

void Probe::observeRelu(int layer, const at::Tensor &input, const at::Tensor &output, PositiveSquares outputSquares)
{
    const bool follows = sameValues(lastOutput_, lastOutputVersion_, input) && lastMeasured_.valid &&
                         lastMeasured_.segment < 0 && lastMeasured_.positiveSumSq >= 0;
    if (!follows) {
        observe(layer, input, output, InputGradient::Scanned, outputSquares);
        return;
    }
    HealthCollector::Measured derived;
    derived.host = reluHealth(lastMeasured_.host, lastMeasured_.positiveSumSq);
    derived.positiveSumSq = lastMeasured_.positiveSumSq;  // relu(relu(x)) keeps the same squares
    derived.valid = true;
    recordForward(layer, input, output, &derived);
    hookOutputGradient(layer, output);
}

void Probe::hookOutputGradient(int layer, const at::Tensor &output)
{
    if (!output.requires_grad())
        return;
    TensorHealth *slot = &record_->layers[layer].grad;
    const int call = int(callSlots_.size()) - 1;  // the call recordForward() just added
    // The same tensor observed again, unchanged (a container's output is its last child's): the
    // hook already on it feeds both. lastOutput_ holds it, so its address names no other tensor.
    // (After an in-place op the tensor has another grad_fn, and a hook of its own.)
    if (lastOutputHook_ && lastOutputHooked_ == output.unsafeGetTensorImpl() && lastOutput_.is_same(output) &&
        lastOutputHookedVersion_ == output._version()) {
        lastOutputHook_->slots.push_back({slot, layer, call});
        return;
    }
    auto targets = std::make_shared<GradTargets>();
    targets->slots.push_back({slot, layer, call});
    output.register_hook([this, targets](const at::Tensor &grad) { recordGradient(*targets, grad); });
    lastOutputHook_ = targets;
    lastOutputHooked_ = output.unsafeGetTensorImpl();
    lastOutputHookedVersion_ = output._version();
}

void Probe::recordGradient(const GradTargets &targets, const at::Tensor &grad)
{
    // The first layer's gradient is derived where a later layer's tells it, else scanned; the
    // others share that measurement.
    HealthCollector::Measured m;
    for (std::size_t i = 0; i < targets.slots.size(); ++i) {
        const auto [slot, layer, call] = targets.slots[i];
        if (i > 0 || (m = derivedGradient(layer, grad)).valid)
            collector_.recordAgain(slot, m);
        else
            m = collector_.record(slot, grad);
        if (std::size_t(layer) < gradientsMeasured_.size())
            gradientsMeasured_[std::size_t(layer)] = m;
        recordCallGradient(call, m);
        backwardOrder_.push_back(layer);
    }
}

void Probe::recordCallGradient(int call, const HealthCollector::Measured &m)
{
    if (call < 0 || std::size_t(call) >= callSlots_.size() || !m.valid)
        return;  // a hook of an earlier step's graph (a graph kept and run again)
    collector_.recordAgain(&callSlots_[std::size_t(call)].outputGrad, m);
    backwardCallOrder_.push_back(call);
}

void Probe::recordForward(int layer, const at::Tensor &input, const at::Tensor &output,
                          const HealthCollector::Measured *known, PositiveSquares outputSquares)
{
    LayerHealth &lh = record_->layers[layer];
    forwardOrder_.push_back(layer);
    CallSlots &call = callSlots_.emplace_back();
    call.layer = layer;
    // A layer's input is usually the previous layer's output, already scanned: reuse that.
    InputSource source{layer, -1};
    if (input.defined() && at::isFloatingType(input.scalar_type())) {
        for (auto it = recentOutputs_.rbegin(); it != recentOutputs_.rend(); ++it)
            if (it->first == input.unsafeGetTensorImpl()) {
                call.fromCall = it->second;
                source.fromLayer = callSlots_[std::size_t(it->second)].layer;
                break;
            }
        if (source.fromLayer < 0) {
            if (sameValues(lastInput_, lastInputVersion_, input)) {
                collector_.recordAgain(&inputScratch_[layer], lastInputMeasured_);
            } else {
                lastInputMeasured_ = collector_.record(&inputScratch_[layer], input.detach());
                lastInput_ = input;
                lastInputVersion_ = input._version();
            }
            collector_.recordAgain(&call.input, lastInputMeasured_);
        }
        inputSources_.push_back(source);
    }
    if (known) {
        collector_.recordAgain(&lh.forward, *known);
        lastMeasured_ = *known;
        lastOutput_ = output;
        lastOutputVersion_ = output._version();
    } else if (sameValues(lastOutput_, lastOutputVersion_, output)) {
        collector_.recordAgain(&lh.forward, lastMeasured_);
    } else {
        lastMeasured_ = collector_.record(&lh.forward, output.detach(), outputSquares);
        lastOutput_ = output;
        lastOutputVersion_ = output._version();
    }
    if (lastMeasured_.valid)  // this output's measurement, whichever way it was taken
        collector_.recordAgain(&call.output, lastMeasured_);
    recentOutputs_.emplace_back(output.unsafeGetTensorImpl(), int(callSlots_.size()) - 1);
}

void Probe::noteInput(const at::Tensor &input, const TensorHealth &health)
{
    lastInput_ = input;
    lastInputVersion_ = input._version();
    lastInputMeasured_ = {};
    lastInputMeasured_.host = health;
    lastInputMeasured_.valid = true;
}

void Probe::forgetLast()
{
    lastOutput_ = at::Tensor();
    lastMeasured_ = {};
    lastInput_ = at::Tensor();
    lastInputMeasured_ = {};
    lastHookNode_.reset();
    lastHookTargets_.reset();
    lastOutputHook_.reset();
    lastOutputHooked_ = nullptr;
}

void Probe::observeLoss(const at::Tensor &loss)
{
    forgetLast();  // the forward pass is over: hold nothing of it
    collector_.record(&record_->lossHealth, loss.detach());
}

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
    calls_.clear();
    for (const CallSlots &c : callSlots_) {
        const TensorHealth &in = c.fromCall >= 0 ? callSlots_[std::size_t(c.fromCall)].output : c.input;
        calls_.push_back(LayerCall{c.layer, !in.hasNonFinite(), c.output.hasNonFinite(), c.fromCall,
                                   !c.outputGrad.hasNonFinite()});
    }
    backwardCalls_.clear();
    for (int call : backwardCallOrder_)
        backwardCalls_.push_back(BackwardCall{call, callSlots_[std::size_t(call)].outputGrad.hasNonFinite()});
    backwardCallOrder_.clear();
    callSlots_.clear();
    recentOutputs_.clear();
    forgetLast();
}

}  // namespace nanscope
