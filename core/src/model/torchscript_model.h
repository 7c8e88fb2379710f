#pragma once
// A user's TorchScript module as a ModelAdapter: the layer table is its named_modules(); the
// probed forward runs an instrumented copy of its forward graph on the same module object (so
// parameters, buffers and training mode are shared and nothing is cloned); the unprobed forward
// is the module's own.
#include "model_api/model_adapter.h"
#include "model/model_inputs.h"
#include "model/torchscript_instrument.h"
#include "model/torchscript_node_trace.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace nanscope {

class TorchScriptModel final : public ModelAdapter {
public:
    explicit TorchScriptModel(torch::jit::Module module);

    const std::vector<Layer> &layers() const override { return layers_; }
    std::vector<at::Tensor> layerParameters(int layer) const override { return ownParameters_[layer]; }
    std::vector<at::Tensor> parameters() const override;
    std::vector<at::Tensor> buffers() const override;
    at::Tensor forward(const at::Tensor &x, Probe *probe) override { return forward(x, {}, probe); }
    at::Tensor forward(const at::Tensor &x, const std::vector<at::Tensor> &sideInputs, Probe *probe) override;
    // The output trained on: "" the first tensor, else a position or a dict key (model_output.h).
    void setOutputSelector(const std::string &selector) { outputSelector_ = selector; }
    // The forward's arguments after self, and how many of them have no default.
    const std::vector<std::string> &inputNames() const { return inputs_.names; }
    std::size_t requiredInputs() const { return inputs_.required; }
    // The whole output of an unprobed forward: what describeOutput() and selectOutput() read.
    c10::IValue rawForward(const at::Tensor &x, const std::vector<at::Tensor> &sideInputs);
    void setTraining(bool on) override { module_.train(on); }
    std::vector<std::pair<std::string, at::Tensor>> layerBuffers(int layer) const override;
    void setLayerTraining(int layer, bool on) override;
    void toDevice(const std::string &device) override;
    // fp16 emulated on the CPU: a second instrumented graph that rounds every module's output
    // through half, run with or without a probe while emulation is on.
    bool setHalfEmulation(bool on) override;
    std::string sourceOf(const std::string &op, bool inBackward, int layer) const override;
    void setNodeTracing(bool on) override;
    std::optional<CodeOrigin> forwardCodeOrigin() const override;
    std::optional<CodeOrigin> backwardCodeOrigin(std::uint64_t sequence) const override;
    void save(const std::string &path) const override;

    torch::jit::Module &module() { return module_; }
    int observeOps() const { return graph_.observeOps; }
    const torch::jit::Graph &instrumentedGraph() const { return *graph_.graph; }

private:
    void refreshParameters();
    torch::jit::Module layerModule(int layer) const;

    torch::jit::Module module_;
    std::vector<Layer> layers_;
    std::vector<std::vector<at::Tensor>> ownParameters_;
    InstrumentedGraph graph_;
    std::unique_ptr<torch::jit::GraphFunction> function_;
    std::unordered_map<std::string, int> layerIds_;
    std::unique_ptr<torch::jit::GraphFunction> halfFunction_;  // built on the first setHalfEmulation(true)
    bool halfEmulation_ = false;
    std::string outputSelector_;
    // The node-traced graph (built on first use, for the precision it was built in) and its events.
    std::unique_ptr<NodeTracedGraph> traced_;
    std::unique_ptr<torch::jit::GraphFunction> tracedFunction_;
    bool tracedHalf_ = false;
    bool nodeTracing_ = false;
    std::vector<NodeEvent> events_;
    ForwardInputs inputs_;
};

// "SqrtBackward0" -> "aten::sqrt", "NativeBatchNormBackward0" -> "aten::native_batch_norm".
std::string forwardOpOfBackwardNode(const std::string &node);

}  // namespace nanscope
