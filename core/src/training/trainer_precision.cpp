// The mixed-precision half of the trainer: fp16 emulation on the CPU and the loss scaler's
// verdict on each step. The forward/backward itself lives in trainer.cpp.
#include "training/trainer.h"

#include "model_api/autocast_scope.h"
#include "nanscope/precision.h"
#include "health/tensor_health.h"

#include <torch/torch.h>

#include <sstream>

namespace nanscope {

std::string Trainer::precisionLabel() const { return nanscope::precisionLabel(controls_.precision, config_.device); }

void Trainer::applyPrecision()
{
    // A new precision or new scaling options start the scaler over, as a new GradScaler would.
    scaling_ = usesLossScaling(controls_);
    if (scaling_)
        scaler_.reset(controls_.lossScaling);
    const bool emulate = emulatesHalf(controls_.precision, config_.device);
    if (!model_->setHalfEmulation(emulate))
        throw std::invalid_argument("this model cannot emulate fp16 on the CPU");
    if (emulate)
        attachHalfGradRounding();
    *roundParamGrads_ = emulate;
}

void Trainer::attachHalfGradRounding()
{
    // Autocast runs Linear and Conv layers in fp16, so on a GPU their weight and bias gradients
    // are fp16 results (then cast to the fp32 master weights). Hooks registered once; the flag
    // turns them into the identity when fp16 is not emulated.
    if (gradHooksAttached_)
        return;
    gradHooksAttached_ = true;
    for (const Layer &l : model_->layers()) {
        if (l.type.rfind("Linear", 0) != 0 && l.type.rfind("Conv", 0) != 0)
            continue;
        for (const at::Tensor &p : model_->layerParameters(l.id)) {
            if (!p.requires_grad())
                continue;
            at::Tensor param = p;
            param.register_hook(
                [flag = roundParamGrads_](const at::Tensor &g) { return *flag ? roundThroughHalf(g) : g; });
        }
    }
}

void Trainer::unscaleGradients(double scale)
{
    at::NoGradGuard noGrad;
    for (const at::Tensor &p : model_->parameters())
        if (p.grad().defined())
            p.mutable_grad().mul_(1.0 / scale);  // Inf and NaN stay what they are
}

bool Trainer::gradientsFinite(const StepRecord &record) const
{
    if (record.layers.empty()) {  // the probe was off: look at the gradients themselves
        for (const at::Tensor &p : model_->parameters())
            if (p.grad().defined() && !allFinite(p.grad()))
                return false;
        return true;
    }
    for (const LayerHealth &lh : record.layers)
        if (lh.paramGrads.hasNonFinite())
            return false;
    return true;
}

bool Trainer::scalerSkipped(StepRecord &rec, std::vector<Event> &events, bool paramsFinite)
{
    const LossScaler::Outcome o = scaler_.update(gradientsFinite(rec));
    const auto number = [](double v) {
        std::ostringstream t;
        t << v;
        return t.str();
    };
    if (o.grew())
        events.emplace_back(EventKind::Info, rec.step, -1,
                            EventMessage{"loss-scale-grew",
                                         {number(o.nextScale), std::to_string(controls_.lossScaling.growthInterval)}});
    if (o.applyStep)
        return false;
    // GradScaler: the update is not applied; forward-pass side effects (BatchNorm statistics) stay.
    zeroGradients();
    for (std::size_t i = 0; i < rec.layers.size(); ++i)
        if (rec.layers[i].paramGrads.hasNonFinite())
            rec.overflowLayers.push_back(int(i));
    rec.skipped = true;
    events.emplace_back(EventKind::Recovery, rec.step, rec.overflowLayers.empty() ? -1 : rec.overflowLayers.front(),
                        EventMessage{"scaler-skipped", {precisionLabel(), number(o.scaleUsed), number(o.nextScale)}});
    rec.why = events.back().text;
    prevParamsFinite_ = paramsFinite;
    ++step_;
    return true;
}

}  // namespace nanscope
