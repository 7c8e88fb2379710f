#include "training/trainer.h"

#include "model_api/autocast_scope.h"
#include "training/control_changes.h"
#include "nanscope/precision.h"
#include "probe/op_tracer.h"
#include "rules/origin.h"
#include "health/tensor_health.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <sstream>

namespace nanscope {

namespace {

// A scalar's value from its health (no host read): the finite value, or NaN / ±Inf.
double scalarValue(const TensorHealth &h)
{
    if (h.nan > 0 || (h.posInf > 0 && h.negInf > 0))
        return NAN;
    if (h.posInf > 0)
        return INFINITY;
    if (h.negInf > 0)
        return -INFINITY;
    return h.min;
}

// The L2 norm of a tensor set from its health: NaN if any NaN, +Inf if any ±Inf.
double normValue(const TensorHealth &h)
{
    if (h.nan > 0)
        return NAN;
    return h.posInf + h.negInf > 0 ? INFINITY : h.finiteL2;
}

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const OptimizerSettings &s,
                                                       const std::vector<at::Tensor> &params, double lr)
{
    switch (s.kind) {
    case OptimizerKind::AdamW:
        return std::make_unique<torch::optim::AdamW>(params,
                                                     torch::optim::AdamWOptions(lr).weight_decay(s.weightDecay));
    case OptimizerKind::Adam:
        return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(lr).weight_decay(s.weightDecay));
    case OptimizerKind::Sgd: break;
    }
    return std::make_unique<torch::optim::SGD>(
        params, torch::optim::SGDOptions(lr).momentum(s.momentum).weight_decay(s.weightDecay));
}

}  // namespace

Trainer::Trainer(RunSetup setup, const RunConfig &config)
    : config_(config), model_(std::move(setup.model)), data_(std::move(setup.data)), loss_(setup.loss),
      applyFix_(std::move(setup.applyFix)),
      batchSize_(setup.batchSize), shuffler_(config.seed), snapshots_(std::size_t(std::max(1, config.snapshotRing)))
{
    controls_ = initialControls(config);
    lr_ = controls_.learningRate;
    applyScenarioFix();
    if (config.device != "cpu") {
        if (config.device == "cuda" && !torch::cuda::is_available())
            throw std::invalid_argument("CUDA was requested but LibTorch sees no CUDA device");
        model_->toDevice(config.device);
    }
    probe_.setDevicePathOnCpu(config.devicePathOnCpu);
    buffers_ = model_->buffers();
    optimizerSettings_ = resolveOptimizer(setup.optimizer, config.optimizer);
    optimizer_ = makeOptimizer(optimizerSettings_, model_->parameters(), lr_);
    applyPrecision();
    model_->setTraining(true);
    if (config.fault.active())
        faultWeight(*model_, config.fault.layer);  // throws for a layer without weights
    if (config.nanSample.active() && !data_.x.is_floating_point())
        throw std::invalid_argument("a NaN sample needs floating-point inputs; this model's are " +
                                    std::string(c10::toString(data_.x.scalar_type())) + " (token ids hold no NaN)");
    prevParamsFinite_ = stateFinite();
    if (prevParamsFinite_)
        pushSnapshot(buffers_);
}

Trainer::~Trainer() = default;

std::vector<ControlChange> Trainer::applyControls(const Controls &c, std::string *text)
{
    std::string line;
    std::vector<ControlChange> changes = diffControls(controls_, c, config_.device, line);
    if (text)
        *text = line;
    if (c.learningRate != controls_.learningRate)
        lr_ = c.learningRate;
    const bool precisionChanged = c.precision != controls_.precision || c.lossScaling != controls_.lossScaling;
    const bool fixChanged = c.fix != controls_.fix;
    controls_ = c;
    if (precisionChanged)
        applyPrecision();
    if (fixChanged)
        applyScenarioFix();
    return changes;
}

void Trainer::applyScenarioFix()
{
    if (applyFix_)
        loss_ = applyFix_(controls_.fix);
}

bool Trainer::stateFinite() const
{
    for (const at::Tensor &p : model_->parameters())
        if (!allFinite(p))
            return false;
    for (const at::Tensor &b : buffers_)
        if (!allFinite(b))
            return false;
    return true;
}

void Trainer::seedStep()
{
    // Each step draws from its own seed, so a re-run of a step (op-level tier, retry) sees the
    // same dropout masks.
    torch::manual_seed(stepSeed(config_.seed, step_));
}

void Trainer::runForwardBackward(const Batch &b, Probe *probe, StepRecord *record)
{
    const torch::Device device(config_.device);
    const at::Tensor x = b.x.to(device);
    const at::Tensor y = b.y.to(device);
    std::vector<at::Tensor> side;
    for (const at::Tensor &t : b.side)
        side.push_back(t.to(device));
    zeroGradients();
    if (probe) {
        probe->beginStep(*model_, record);
        probe->observeParameters(*model_);
        if (x.is_same(b.x))  // on the CPU the model sees the batch whose health computeStep() took
            probe->noteInput(x, record->inputHealth);
    }
    at::Tensor loss;
    {
        AutocastScope autocast(controls_.precision, config_.device);  // forward and loss only
        const at::Tensor out = side.empty() ? model_->forward(x, probe) : model_->forward(x, side, probe);
        loss = computeLoss(loss_, out, y);
    }
    if (probe)
        probe->observeLoss(loss);
    if (scaling_) {
        // The gradients flowing back are scaled (that is what overflows in fp16); the parameters'
        // gradients are unscaled before anyone looks at them, clips them or applies them.
        const double scale = scaler_.scale();
        (loss.to(at::kFloat) * scale).backward();
        unscaleGradients(scale);
    } else {
        loss.backward();
    }
    if (probe) {
        probe->observeParameterGradients(*model_);
        probe->finishStep();
    }
}

std::shared_ptr<StepRecord> Trainer::computeStep(bool retrySameBatch)
{
    const auto started = std::chrono::steady_clock::now();
    auto rec = std::make_shared<StepRecord>();
    rec->step = step_;
    rec->learningRate = lr_;
    rec->lossScale = lossScale();
    rec->lossScaling = scaling_;
    rec->precision = controls_.precision;
    for (auto &group : optimizer_->param_groups())
        group.options().set_lr(lr_);

    const bool fresh = !retrySameBatch || pending_.indices.empty();
    if (fresh) {
        if (!fedBatches_.empty())  // a replay: the batch keeps the step it was drawn at
            step_ = rec->step = fedBatches_.front().step;
        pending_ = nextBatch();
        pending_.step = step_;
    }
    Batch &b = pending_;
    rec->inputHealth = computeHealth(b.x);
    if (rec->inputHealth.hasNonFinite())
        rec->badSamples = nonFiniteRows(b.x, b.indices);
    if (controls_.recovery.quarantineSamples && !rec->badSamples.empty()) {
        std::vector<std::int64_t> keep;
        std::vector<std::int64_t> keptIndices;
        for (std::size_t r = 0; r < b.indices.size(); ++r)
            if (!std::count(rec->badSamples.begin(), rec->badSamples.end(), b.indices[r])) {
                keep.push_back(std::int64_t(r));
                keptIndices.push_back(b.indices[r]);
            }
        const at::Tensor k = torch::tensor(keep, torch::kLong);
        std::vector<at::Tensor> side;
        for (const at::Tensor &t : b.side)
            side.push_back(t.index_select(0, k));
        b = {step_, keptIndices, b.x.index_select(0, k), b.y.index_select(0, k), side};
        rec->quarantined = rec->badSamples;
        quarantined_.insert(rec->badSamples.begin(), rec->badSamples.end());
        rec->inputHealth = computeHealth(b.x);
    }

    if (fresh)
        keepBatch(b);

    preStepBuffers_ = cloneAll(buffers_);
    seedStep();
    const FlippedWeight flipped = flipFaultWeight();
    const bool probed = probeMode_ != ProbeMode::Off;
    if (probeMode_ == ProbeMode::OpLevelEveryStep) {
        OpTracer tracer;
        runForwardBackward(b, &probe_, rec.get());
    } else {
        runForwardBackward(b, probed ? &probe_ : nullptr, rec.get());
    }

    // Loss and gradient norm come out of the map: no extra host read.
    rec->loss = scalarValue(rec->lossHealth);
    TensorHealth grads;
    for (const LayerHealth &lh : rec->layers)
        grads.merge(lh.paramGrads);
    rec->gradNorm = normValue(grads);
    rec->gradNormClipped = rec->gradNorm;

    if (probed) {
        rec->origin = findOrigin({*rec, model_->layers(), probe_.forwardOrder(), prevParamsFinite_, &probe_.calls(),
                                  &probe_.backwardCalls()});
        if (rec->failed() && !opLevelDone_ && config_.opLevelOrigin && rec->origin.phase != Phase::Input &&
            rec->origin.phase != Phase::Parameter && rec->origin.phase != Phase::Update) {
            nameOpOfOrigin(b, *rec);
            opLevelDone_ = true;
        }
        rec->origin.explanation = explainOrigin(rec->origin, *rec);
    }
    unflip(flipped);
    rec->stepMillis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return rec;
}

void Trainer::plainStep(const std::function<void()> &beforeClipping)
{
    // The forward and backward NaNScope runs unprobed (autocast and loss scaling as a user's
    // GradScaler loop has them), then the user's own clipping and update.
    runForwardBackward(nextBatch(), nullptr, nullptr);
    if (beforeClipping)
        beforeClipping();
    if (controls_.clipNorm)
        torch::nn::utils::clip_grad_norm_(model_->parameters(), *controls_.clipNorm);
    optimizer_->step();
    ++step_;
}

void Trainer::nameOpOfOrigin(const Batch &b, StepRecord &record)
{
    // Same batch, weights and RNG; buffers back to where the step found them.
    copyInto(buffers_, preStepBuffers_);
    seedStep();
    TracedOp traced;
    model_->setNodeTracing(true);
    try {
        OpTracer tracer;
        runForwardBackward(b, nullptr, nullptr);
        traced = tracer.result();
    } catch (...) {
        model_->setNodeTracing(false);
        throw;
    }
    model_->setNodeTracing(false);
    Origin &o = record.origin;
    if (traced.found) {
        o.op = traced.inBackward ? traced.op + " (" + traced.innerOp + ")" : traced.op;
        o.source = model_->sourceOf(traced.op, traced.inBackward, o.layer);
    }
    // Where the model's own code tells more: the module whose forward holds the op, and its line.
    if (o.phase == Phase::Forward) {
        if (const auto code = model_->forwardCodeOrigin())
            applyCodeOrigin(o, *code, model_->layers(), /*forward=*/true);
    } else if (o.phase == Phase::Backward && traced.inBackward && traced.sequence >= 0) {
        if (const auto code = model_->backwardCodeOrigin(std::uint64_t(traced.sequence)))
            applyCodeOrigin(o, *code, model_->layers(), /*forward=*/false);
    }
}

void Trainer::discardStep(StepRecord &record, bool retry)
{
    copyInto(buffers_, preStepBuffers_);
    zeroGradients();
    record.skipped = true;
    record.why = retry ? "retried with the current controls" : "batch skipped";
    if (!retry) {
        pending_ = {};
        ++step_;
        // The state never trained on it: a replay from the snapshot must not either.
        if (!recentBatches_.empty() && recentBatches_.back().step == record.step) {
            recentBatches_.pop_back();
            if (recentBatches_.empty())
                heldFrom_ = -1;
        }
    }
}

bool Trainer::rollback(bool halveLr, EventMessage *what)
{
    const Snapshot *s = snapshots_.newest();
    if (!s)
        return false;
    restoreSnapshot(*s, *model_, *optimizer_);
    recentBatches_.clear();  // from here the snapshot's state trains on the batches to come
    heldFrom_ = -1;
    if (halveLr)
        lr_ *= 0.5;
    for (auto &group : optimizer_->param_groups())
        group.options().set_lr(lr_);
    prevParamsFinite_ = true;
    if (what) {
        std::ostringstream lr;
        lr << lr_;
        *what = halveLr ? EventMessage{"restored-lr-halved", {std::to_string(s->step), lr.str()}}
                        : EventMessage{"restored", {std::to_string(s->step)}};
    }
    return true;
}

void Trainer::applyStep(StepRecord &rec, std::vector<Event> &events, std::string &stopReason)
{
    pending_ = {};
    const RecoveryPolicy &policy = controls_.recovery;
    const bool stepFinite = !rec.origin.valid() && std::isfinite(rec.loss) && std::isfinite(rec.gradNorm);
    bool paramsFinite = true;
    for (const LayerHealth &lh : rec.layers)
        paramsFinite = paramsFinite && !lh.params.hasNonFinite();
    if (rec.layers.empty())
        paramsFinite = stateFinite();  // the probe was off

    if (!std::isfinite(rec.loss) && policy.rollbackOnNonFiniteLoss) {
        copyInto(buffers_, preStepBuffers_);
        zeroGradients();
        ++consecutiveRollbacks_;
        if (consecutiveRollbacks_ > policy.maxRetries) {
            std::ostringstream o;
            o << "stopped: the loss was still non-finite after " << policy.maxRetries << " rollbacks in a row (lr now "
              << lr_ << ")";
            stopReason = o.str();
            rec.skipped = true;
            rec.why = stopReason;
            ++step_;
            return;
        }
        EventMessage what;
        if (rollback(true, &what)) {
            rec.rolledBack = true;
            rec.skipped = true;
            events.emplace_back(EventKind::Rollback, rec.step, rec.origin.layer, what);
        } else {
            rec.skipped = true;
            events.emplace_back(EventKind::Recovery, rec.step, -1, EventMessage{"no-snapshot-skipped", {}});
        }
        rec.why = events.back().text;
        ++step_;
        return;
    }

    // Under loss scaling, overflowing gradients are the scaler's to handle (skip the step, back off)
    // before the policy would zero them: GradScaler's behaviour.
    if (scaling_ && scalerSkipped(rec, events, paramsFinite))
        return;

    // A state that was checked finite (parameters this step, buffers as the step found them) and
    // whose step was finite is worth keeping.
    if (stepFinite && paramsFinite && step_ - lastSnapshotStep_ >= config_.snapshotEvery) {
        pushSnapshot(preStepBuffers_);
        consecutiveRollbacks_ = 0;
    }

    const std::vector<at::Tensor> params = model_->parameters();
    double norm = rec.gradNorm;
    if (!std::isfinite(norm) && policy.zeroNonFiniteGrads) {
        at::NoGradGuard noGrad;
        double sumSq = 0;
        for (const at::Tensor &p : params)
            if (p.grad().defined()) {
                p.mutable_grad().nan_to_num_(0.0, 0.0, 0.0);
                sumSq += std::pow(p.grad().norm().item<double>(), 2);
            }
        norm = std::sqrt(sumSq);
        rec.zeroedGradients = true;
        events.emplace_back(EventKind::Recovery, rec.step, rec.origin.layer, EventMessage{"grads-zeroed", {}});
    }
    if (controls_.clipNorm && std::isfinite(norm) && norm > *controls_.clipNorm) {
        // The norm is already known from the map, so clipping needs no second reduction.
        at::NoGradGuard noGrad;
        const double coef = *controls_.clipNorm / (norm + 1e-6);
        for (const at::Tensor &p : params)
            if (p.grad().defined())
                p.mutable_grad().mul_(coef);
        norm = norm * coef;
    }
    rec.gradNormClipped = norm;
    const bool measureUpdate = !rec.layers.empty();  // the map is on
    if (measureUpdate)
        updateMeter_.before(*model_);
    optimizer_->step();
    if (measureUpdate)
        updateMeter_.after(rec);
    prevParamsFinite_ = paramsFinite;
    ++step_;
}

}  // namespace nanscope
