#pragma once
// One training run's state and its step, split in two so that a step can pause between its
// checks and its update: computeStep() runs forward, loss and backward and fills the record;
// then applyStep() (recovery, clipping, the optimizer) or discardStep().
#include "training/loss_scaler.h"
#include "nanscope/run_config.h"
#include "probe/probe.h"
#include "model_api/run_setup.h"
#include "training/fault_injection.h"
#include "training/snapshot.h"
#include "training/update_meter.h"

#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace torch::optim {
class Optimizer;
}

namespace nanscope {

enum class ProbeMode { Off, FullMap, OpLevelEveryStep };

// The samples one step trains on, as the model sees them (after any quarantine).
struct TrainingBatch {
    int step = -1;  // the step that drew it
    std::vector<std::int64_t> indices;
    at::Tensor x, y;
    std::vector<at::Tensor> side;  // the model's further inputs
    // A sample was made bad on purpose (SampleInjection): the data is no longer the seed's.
    bool injected = false;
};

// Everything a step depends on, as it was before the step: what a capsule keeps so that the step
// can be computed again elsewhere (replay/capsule_codec.h).
struct StepState {
    int step = 0;
    double learningRate = 0;
    Controls controls;
    double lossScale = 1;
    int growthTracker = 0;
    bool prevParamsFinite = true;
    std::vector<at::Tensor> parameters;
    std::vector<at::Tensor> buffers;
    std::string optimizerState;
    TrainingBatch batch;
};

// The seed each step's random draws start from (dropout masks), so a step computed again draws the
// same.
inline std::uint64_t stepSeed(std::uint64_t runSeed, int step) { return runSeed * 1000003ULL + std::uint64_t(step); }

class Trainer {
public:
    Trainer(RunSetup setup, const RunConfig &config);
    ~Trainer();

    const std::vector<Layer> &layers() const { return model_->layers(); }
    int step() const { return step_; }
    double learningRate() const { return lr_; }
    // The scale the next step's loss is multiplied by (1 when loss scaling is not active).
    double lossScale() const { return scaling_ ? scaler_.scale() : 1.0; }
    // "fp32", "bf16", "fp16 (emulated on CPU)", ...
    std::string precisionLabel() const;
    const OptimizerSettings &optimizerSettings() const { return optimizerSettings_; }
    void setProbeMode(ProbeMode m) { probeMode_ = m; }

    // Applies changed controls (a new LR replaces the rollback-halved one). Returns what changed,
    // empty when nothing did; `text` gets it as one line ("lr 0.01, clip off").
    std::vector<ControlChange> applyControls(const Controls &c, std::string *text = nullptr);
    const Controls &controls() const { return controls_; }

    std::shared_ptr<StepRecord> computeStep(bool retrySameBatch = false);
    // A user's own training step with nothing NaNScope adds (no health scan, no snapshot, no
    // host read): batch, forward, loss, backward, clipping, update. The benchmark's baseline.
    // `beforeClipping`: what a data-parallel loop does between backward and its update (the
    // gradient all-reduce).
    void plainStep(const std::function<void()> &beforeClipping = {});
    // Recovery, clipping and the update. Events are appended; `stopReason` set if the policy gave up.
    void applyStep(StepRecord &record, std::vector<Event> &events, std::string &stopReason);
    // Leaves weights, buffers and optimizer untouched by this step (it still counts as a step
    // unless `retry`, where the same batch is computed again).
    void discardStep(StepRecord &record, bool retry);
    // Restores the newest checked-finite snapshot; false when there is none.
    bool rollback(bool halveLr, EventMessage *what);

    const std::set<std::int64_t> &quarantined() const { return quarantined_; }
    bool stateFinite() const;  // parameters and buffers
    ModelAdapter &model() { return *model_; }
    torch::optim::Optimizer &optimizer() { return *optimizer_; }
    const SnapshotRing &snapshots() const { return snapshots_; }

    // The state the step just computed started from (call between computeStep() and applyStep()):
    // one copy of the parameters; buffers, optimizer state and batch as the step found them.
    StepState stateBeforeStep(const StepRecord &record) const;
    // The batches the newest snapshot's state has trained on since it was taken (or restored by a
    // rollback), through the current step: complete when the first is of step batchesHeldFrom()
    // (they are dropped from the front past 64).
    const std::vector<TrainingBatch> &batchesSinceSnapshot() const { return recentBatches_; }
    int batchesHeldFrom() const { return heldFrom_; }
    // Puts the trainer back where `state` was: the next computeStep(true) computes that step again.
    void restoreStepState(const StepState &state);
    // Puts the trainer back at snapshot `s` with `controls`; the next steps train on `batches`.
    void restoreSnapshotState(const Snapshot &s, const Controls &controls, std::vector<TrainingBatch> batches);
    // The snapshot a rollback restores (a replay's, instead of the state the trainer began with).
    void resetSnapshots(const Snapshot *newest);
    // Skips the op-level re-run of a failing step (a replay that only asks whether it fails).
    void setOpLevelOrigin(bool on) { opLevelDone_ = !on; }
    // What the injected fault did, once it did: "fc1.weight[3, 7]: 0.12 -> 4.1e+37 (bit 30)".
    const std::string &faultDone() const { return faultDone_; }
    // Flips the fault's bit again, for good: a job's rank whose memory was corrupted (after the
    // step's capsule kept the weights as they were).
    void keepFaultFlipped();

private:
    using Batch = TrainingBatch;
    Batch nextBatch();
    Batch drawBatch();
    void keepBatch(const Batch &b);
    void pushSnapshot(const std::vector<at::Tensor> &buffers);
    // A restored state's controls, LR and loss scaler; gradients cleared.
    void restoreControls(const Controls &controls, double learningRate, double lossScale, int growthTracker);
    // The injected fault, when this step is its step.
    FlippedWeight flipFaultWeight();
    void seedStep();
    // `record` receives the probe's map; without a probe it is not touched (may be null).
    void runForwardBackward(const Batch &b, Probe *probe, StepRecord *record);
    void nameOpOfOrigin(const Batch &b, StepRecord &record);
    // Puts the current controls' scenario fix into the model (and the loss it takes).
    void applyScenarioFix();
    // Sets up the current controls' precision: loss scaler, fp16 emulation on the CPU.
    void applyPrecision();
    void attachHalfGradRounding();
    void unscaleGradients(double scale);
    bool gradientsFinite(const StepRecord &record) const;
    // The scaler's verdict on a step; true when it skipped the step (nothing else to do then).
    bool scalerSkipped(StepRecord &record, std::vector<Event> &events, bool paramsFinite);

    RunConfig config_;
    std::unique_ptr<ModelAdapter> model_;
    Dataset data_;
    LossKind loss_;
    std::function<LossKind(std::optional<double>)> applyFix_;  // the scenario's live fix, if it has one
    int batchSize_;
    OptimizerSettings optimizerSettings_;
    std::unique_ptr<torch::optim::Optimizer> optimizer_;
    void zeroGradients();
    std::vector<at::Tensor> buffers_;
    Controls controls_;
    double lr_ = 0.0;
    ProbeMode probeMode_ = ProbeMode::FullMap;
    Probe probe_;
    UpdateMeter updateMeter_;

    int step_ = 0;
    int epoch_ = 0;
    std::size_t cursor_ = 0;
    std::vector<std::int64_t> order_;
    std::mt19937_64 shuffler_;
    std::set<std::int64_t> quarantined_;

    Batch pending_;
    std::vector<at::Tensor> preStepBuffers_;
    bool prevParamsFinite_ = true;
    bool opLevelDone_ = false;
    SnapshotRing snapshots_;
    int lastSnapshotStep_ = -1;
    int consecutiveRollbacks_ = 0;

    std::vector<Batch> recentBatches_;  // since the newest snapshot
    int heldFrom_ = 0;                  // -1: from the next batch drawn
    std::vector<Batch> fedBatches_;     // a replay's: drawn before the data set's own
    std::string faultDone_;

    LossScaler scaler_;
    bool scaling_ = false;
    // Read by the gradient hooks of Linear/Conv parameters while fp16 is emulated.
    std::shared_ptr<bool> roundParamGrads_ = std::make_shared<bool>(false);
    bool gradHooksAttached_ = false;
};

}  // namespace nanscope
