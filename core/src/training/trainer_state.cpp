// The trainer's state around one step, taken out and put back: what a capsule keeps of a run and
// what a replay restores. The step itself lives in trainer.cpp.
#include "training/trainer.h"

#include <torch/optim/optimizer.h>
#include <torch/version.h>

namespace nanscope {

// In place, as LibTorch 1.13 does; 2.x would drop the gradients (set_to_none), and a parameter that
// gets no gradient would then skip its weight decay and momentum: results would differ by version.
void Trainer::zeroGradients()
{
#if TORCH_VERSION_MAJOR >= 2
    optimizer_->zero_grad(false);
#else
    optimizer_->zero_grad();
#endif
}

StepState Trainer::stateBeforeStep(const StepRecord &record) const
{
    StepState s;
    s.step = record.step;
    s.learningRate = record.learningRate;
    s.controls = controls_;
    s.lossScale = record.lossScale;
    s.growthTracker = scaler_.growthTracker();  // the scaler moves in applyStep(), not before
    s.prevParamsFinite = prevParamsFinite_;
    s.parameters = cloneAll(model_->parameters());  // the step's one copy
    s.buffers = preStepBuffers_;                    // already a copy, never written again
    s.optimizerState = saveOptimizer(*optimizer_);
    s.batch = pending_;
    return s;
}

void Trainer::resetSnapshots(const Snapshot *newest)
{
    snapshots_.clear();
    recentBatches_.clear();
    heldFrom_ = newest ? newest->step : -1;
    if (newest) {
        snapshots_.push(*newest);
        lastSnapshotStep_ = newest->step;
    }
}

void Trainer::restoreControls(const Controls &controls, double learningRate, double lossScale, int growthTracker)
{
    controls_ = controls;
    applyPrecision();
    applyScenarioFix();
    if (scaling_)
        scaler_.restore(lossScale, growthTracker);
    lr_ = learningRate;
    for (auto &group : optimizer_->param_groups())
        group.options().set_lr(lr_);
    zeroGradients();
    opLevelDone_ = false;
}

void Trainer::restoreStepState(const StepState &s)
{
    copyInto(model_->parameters(), s.parameters);
    copyInto(buffers_, s.buffers);
    loadOptimizer(*optimizer_, s.optimizerState);
    restoreControls(s.controls, s.learningRate, s.lossScale, s.growthTracker);
    step_ = s.step;
    prevParamsFinite_ = s.prevParamsFinite;
    fedBatches_.clear();
    pending_ = s.batch;
}

void Trainer::restoreSnapshotState(const Snapshot &s, const Controls &controls, std::vector<TrainingBatch> batches)
{
    restoreSnapshot(s, *model_, *optimizer_);
    restoreControls(controls, controls.learningRate, s.lossScale, s.growthTracker);
    step_ = s.step;
    prevParamsFinite_ = true;
    consecutiveRollbacks_ = 0;
    pending_ = {};
    fedBatches_ = std::move(batches);
}

}  // namespace nanscope
