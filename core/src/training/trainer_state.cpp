// The trainer's state around one step, taken out and put back: what a capsule keeps of a run and
// what a replay restores. The step itself lives in trainer.cpp.
#include "training/trainer.h"

#include <torch/optim/optimizer.h>
#include <torch/serialize.h>

#include <sstream>

namespace nanscope {

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
    std::ostringstream out;
    torch::save(*optimizer_, out);
    s.optimizerState = out.str();
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

void Trainer::restoreStepState(const StepState &s)
{
    controls_ = s.controls;
    applyPrecision();
    if (scaling_)
        scaler_.restore(s.lossScale, s.growthTracker);
    lr_ = s.learningRate;
    for (auto &group : optimizer_->param_groups())
        group.options().set_lr(lr_);
    copyInto(model_->parameters(), s.parameters);
    copyInto(buffers_, s.buffers);
    std::istringstream in(s.optimizerState);
    torch::load(*optimizer_, in);
    optimizer_->zero_grad();
    step_ = s.step;
    prevParamsFinite_ = s.prevParamsFinite;
    opLevelDone_ = false;
    fedBatches_.clear();
    pending_ = s.batch;
}

void Trainer::restoreSnapshotState(const Snapshot &s, const Controls &controls, std::vector<TrainingBatch> batches)
{
    controls_ = controls;
    applyPrecision();
    if (scaling_)
        scaler_.restore(s.lossScale, s.growthTracker);
    lr_ = controls.learningRate;
    restoreSnapshot(s, *model_, *optimizer_);
    for (auto &group : optimizer_->param_groups())
        group.options().set_lr(lr_);
    optimizer_->zero_grad();
    step_ = s.step;
    prevParamsFinite_ = true;
    opLevelDone_ = false;
    consecutiveRollbacks_ = 0;
    pending_ = {};
    fedBatches_ = std::move(batches);
}

}  // namespace nanscope
