#pragma once
// The per-layer map of one step: forward output health, the gradient flowing into each output,
// parameters and their gradients. Models call observeOutput() after each layer.
#include "health/health_collector.h"
#include "nanscope/records.h"
#include "rules/origin.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace torch::autograd {
struct Node;
}

namespace nanscope {

class ModelAdapter;

class Probe {
public:
    // Prepares `record` for a step of `model`; record->layers gets one entry per layer.
    void beginStep(const ModelAdapter &model, StepRecord *record);
    // How the gradient flowing into a layer's input follows from the one flowing into its output,
    // where the layer's backward only moves values: a reshape passes the same values on, and a
    // max pool whose windows do not overlap puts each in a place of its own among zeros. The
    // layer that produced that input then takes the derived health instead of a scan.
    enum class InputGradient { Scanned, SameValues, SameValuesAmongZeros };
    // Forward: the layer saw `input` and produced `output`; a gradient hook is attached to it.
    // `outputSquares`: Summed where a ReLU observed with observeRelu() takes `output` next.
    void observe(int layer, const at::Tensor &input, const at::Tensor &output,
                 InputGradient inputGradient = InputGradient::Scanned,
                 PositiveSquares outputSquares = PositiveSquares::Skipped);
    // As observe(), but the gradient is read by a pre-hook on the autograd node that produced
    // `output` (at its output_nr): it sees the gradient of the value as observed, even when an
    // in-place op (relu_, add_) rewrites the tensor afterwards, where a tensor hook would follow
    // the tensor to its newest version or be dropped. For graphs with in-place ops (TorchScript).
    void observeAtProducer(int layer, const at::Tensor &input, const at::Tensor &output);
    // As observe(), for a ReLU (not in place) whose input is the output observed just before:
    // its forward health follows from that output's scan (reluHealth()) instead of a scan of its own.
    void observeRelu(int layer, const at::Tensor &input, const at::Tensor &output,
                     PositiveSquares outputSquares = PositiveSquares::Skipped);
    void observeLoss(const at::Tensor &loss);
    // Before forward: the parameters the forward pass will use.
    void observeParameters(const ModelAdapter &model);
    // After backward: the parameters' gradients.
    void observeParameterGradients(const ModelAdapter &model);
    // `input`'s health is already known (the trainer scanned the batch): a layer it goes to
    // reuses it.
    void noteInput(const at::Tensor &input, const TensorHealth &health);
    // Reads everything back (one host read on a device) and fills the record.
    void finishStep();
    // See HealthCollector::setDevicePathOnCpu().
    void setDevicePathOnCpu(bool on) { collector_.setDevicePathOnCpu(on); }
    // See HealthCollector::hostElementsScanned(): this step's.
    std::int64_t hostElementsScanned() const { return collector_.hostElementsScanned() - scannedBeforeStep_; }

    const std::vector<int> &forwardOrder() const { return forwardOrder_; }
    // Each call of the step on its own (after finishStep()), in the order calls ended.
    const std::vector<LayerCall> &calls() const { return calls_; }
    // The gradients into the calls' outputs as backward ran (after finishStep()).
    const std::vector<BackwardCall> &backwardCalls() const { return backwardCalls_; }
    const std::vector<int> &backwardOrder() const { return backwardOrder_; }

private:
    // `known`: the output's health, already measured (else it is scanned here).
    void recordForward(int layer, const at::Tensor &input, const at::Tensor &output,
                       const HealthCollector::Measured *known = nullptr,
                       PositiveSquares outputSquares = PositiveSquares::Skipped);
    void hookOutputGradient(int layer, const at::Tensor &output);
    // The health of `layer`'s output gradient `grad` derived from a later layer's (invalid where
    // it cannot be).
    HealthCollector::Measured derivedGradient(int layer, const at::Tensor &grad) const;
    struct GradTargets;
    // A gradient seen by a hook: its health into each target's slot, from one measurement.
    void recordGradient(const GradTargets &targets, const at::Tensor &grad);
    void hookGradient(const std::shared_ptr<torch::autograd::Node> &node, std::uint32_t index, TensorHealth *slot,
                      int layer);
    // A gradient into call `call`'s output, measured as `m`: kept with the call, in backward order.
    void recordCallGradient(int call, const HealthCollector::Measured &m);
    void forgetLast();

    StepRecord *record_ = nullptr;
    HealthCollector collector_;
    std::int64_t scannedBeforeStep_ = 0;
    std::vector<int> forwardOrder_;
    std::vector<int> backwardOrder_;
    struct InputSource {
        int layer;
        int fromLayer;  // the layer whose output was this input, -1: scanned into inputScratch_
    };
    std::vector<InputSource> inputSources_;
    std::vector<TensorHealth> inputScratch_;
    // Per layer: the later layer its output gradient follows from, and how.
    struct GradientSource {
        int layer = -1;
        InputGradient how = InputGradient::Scanned;
        std::int64_t numel = 0;
        // The later layer's output as observed: an in-place op on it since would have changed
        // which gradient its hook sees.
        c10::VariableVersion outputVersion;
        std::uint32_t versionSeen = 0;
    };
    std::vector<GradientSource> gradientSources_;
    std::vector<HealthCollector::Measured> gradientsMeasured_;  // per layer, this step's
    // TensorImpl address of each output, newest last, with the call (in callSlots_) that made it.
    // Not held: holding activations would keep memory the allocator reuses hot. Searched
    // newest-first, so a reused address matches the tensor that lives there now (a layer's input
    // is alive while it is observed).
    std::vector<std::pair<const void *, int>> recentOutputs_;
    // Each call's input (when no earlier call's output was it) and output, apart from the layer's
    // merged health: a deque, as the collector fills the slots at resolve().
    struct CallSlots {
        int layer = -1;
        int fromCall = -1;  // the call whose output was this call's input, -1: `input` says
        TensorHealth input;
        TensorHealth output;
        TensorHealth outputGrad;  // the gradient into its output, when backward handed one
    };
    std::deque<CallSlots> callSlots_;
    std::vector<LayerCall> calls_;
    std::vector<int> backwardCallOrder_;  // calls whose output gradient came, as backward ran
    std::vector<BackwardCall> backwardCalls_;
    // The last observed output, held until the next observation so that its address cannot be
    // reused: observing the same tensor, unchanged, again (a container whose output is its last
    // child's) reuses the scan.
    at::Tensor lastOutput_;
    std::int64_t lastOutputVersion_ = 0;
    HealthCollector::Measured lastMeasured_;
    // The same for the last input that was not an observed output (the batch goes to the first
    // layer and to the model as a whole).
    at::Tensor lastInput_;
    std::int64_t lastInputVersion_ = 0;
    HealthCollector::Measured lastInputMeasured_;
    // The last gradient pre-hook: the same node and output again adds a slot to it.
    std::shared_ptr<torch::autograd::Node> lastHookNode_;
    std::uint32_t lastHookIndex_ = 0;
    std::shared_ptr<GradTargets> lastHookTargets_;
    // The last tensor hook hookOutputGradient() put on an output, and that output's TensorImpl.
    std::shared_ptr<GradTargets> lastOutputHook_;
    const void *lastOutputHooked_ = nullptr;
    std::int64_t lastOutputHookedVersion_ = 0;
};

}  // namespace nanscope
