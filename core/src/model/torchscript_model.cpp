#include "model/torchscript_model.h"

#include "model/model_inputs.h"
#include "model/model_output.h"
#include "probe/node_trace_op.h"
#include "probe/observe_op.h"

#include <cctype>
#include <optional>
#include <stdexcept>
#include <unordered_map>

namespace nanscope {

namespace {

// The function shares the graph: the InstrumentedGraph's path table need not outlive this.
std::unique_ptr<torch::jit::GraphFunction> runnable(const std::shared_ptr<torch::jit::Graph> &graph, const char *name)
{
    return std::make_unique<torch::jit::GraphFunction>(c10::QualifiedName(name), graph, nullptr);
}

}  // namespace

std::string forwardOpOfBackwardNode(const std::string &node)
{
    std::string base = node;
    while (!base.empty() && std::isdigit(static_cast<unsigned char>(base.back())))
        base.pop_back();
    const std::string suffix = "Backward";
    if (base.size() <= suffix.size() || base.compare(base.size() - suffix.size(), suffix.size(), suffix) != 0)
        return {};
    base.resize(base.size() - suffix.size());
    std::string op = "aten::";
    for (std::size_t i = 0; i < base.size(); ++i) {
        const auto c = static_cast<unsigned char>(base[i]);
        if (std::isupper(c) && i > 0)
            op += '_';
        op += char(std::tolower(c));
    }
    return op;
}

TorchScriptModel::TorchScriptModel(torch::jit::Module module) : module_(module)
{
    std::unordered_map<std::string, int> ids;
    for (const auto &item : module_.named_modules()) {
        Layer l;
        l.id = int(layers_.size());
        l.path = item.name;
        const auto type = item.value.type()->name();
        l.type = type ? type->name() : std::string("Module");
        const auto dot = l.path.rfind('.');
        if (!l.path.empty()) {
            const std::string parent = dot == std::string::npos ? std::string() : l.path.substr(0, dot);
            const auto p = ids.find(parent);
            l.parent = p == ids.end() ? 0 : p->second;
        }
        ids.emplace(l.path, l.id);
        layers_.push_back(l);
    }
    refreshParameters();
    const auto forward = module_.find_method("forward");
    if (!forward)
        throw std::invalid_argument("the model has no forward method");
    // The data and any further inputs (a mask, lengths): each batch feeds them all.
    inputs_ = forwardInputs(module_);
    if (inputs_.names.empty())
        throw std::invalid_argument("the model's forward takes no input; NaNScope feeds it at least one tensor");
    graph_ = instrumentForward(module_, ids);
    function_ = runnable(graph_.graph, "nanscope.instrumented_forward");
    layerIds_ = std::move(ids);
}

bool TorchScriptModel::setHalfEmulation(bool on)
{
    if (on && !halfFunction_)
        halfFunction_ = runnable(instrumentForward(module_, layerIds_, /*roundOutputsThroughHalf=*/true).graph,
                                 "nanscope.fp16_emulated_forward");
    halfEmulation_ = on;
    return true;
}

void TorchScriptModel::refreshParameters()
{
    ownParameters_.clear();
    for (const auto &item : module_.named_modules()) {
        std::vector<at::Tensor> own;
        for (const at::Tensor &p : item.value.parameters(/*recurse=*/false))
            own.push_back(p);
        ownParameters_.push_back(std::move(own));
    }
}

torch::jit::Module TorchScriptModel::layerModule(int layer) const
{
    int i = 0;
    for (const auto &item : module_.named_modules())
        if (i++ == layer)
            return item.value;  // a handle: changes reach the model's own submodule
    throw std::out_of_range("no layer " + std::to_string(layer));
}

std::vector<std::pair<std::string, at::Tensor>> TorchScriptModel::layerBuffers(int layer) const
{
    std::vector<std::pair<std::string, at::Tensor>> out;
    for (const auto &item : layerModule(layer).named_buffers(/*recurse=*/false))
        out.emplace_back(item.name, item.value);
    return out;
}

void TorchScriptModel::setLayerTraining(int layer, bool on) { layerModule(layer).train(on); }

std::vector<at::Tensor> TorchScriptModel::parameters() const
{
    std::vector<at::Tensor> out;
    for (const at::Tensor &p : module_.parameters())
        out.push_back(p);
    return out;
}

std::vector<at::Tensor> TorchScriptModel::buffers() const
{
    std::vector<at::Tensor> out;
    for (const at::Tensor &b : module_.buffers())
        out.push_back(b);
    return out;
}

c10::IValue TorchScriptModel::rawForward(const at::Tensor &x, const std::vector<at::Tensor> &sideInputs)
{
    std::vector<c10::IValue> inputs{x};
    inputs.insert(inputs.end(), sideInputs.begin(), sideInputs.end());
    return module_.forward(inputs);
}

at::Tensor TorchScriptModel::forward(const at::Tensor &x, const std::vector<at::Tensor> &sideInputs, Probe *probe)
{
    if (!probe && !halfEmulation_ && !nodeTracing_)
        return selectOutput(rawForward(x, sideInputs), outputSelector_);
    ObserveScope scope(probe);  // null: the observe ops only pass their tensor through
    std::optional<NodeTraceScope> tracing;
    if (nodeTracing_)
        tracing.emplace(&events_);
    torch::jit::Stack stack{module_._ivalue(), x};
    stack.insert(stack.end(), sideInputs.begin(), sideInputs.end());
    // The instrumented graph has no schema to fill in defaults: the forward's own are pushed.
    for (std::size_t i = stack.size() - 1; i < inputs_.defaults.size(); ++i)
        stack.push_back(inputs_.defaults[i]);
    (nodeTracing_ ? tracedFunction_ : halfEmulation_ ? halfFunction_ : function_)->run(stack);
    return selectOutput(stack.back(), outputSelector_);
}

void TorchScriptModel::toDevice(const std::string &device)
{
    module_.to(c10::Device(device));
    refreshParameters();
}

std::string TorchScriptModel::sourceOf(const std::string &op, bool inBackward, int layer) const
{
    const std::string forwardOp = inBackward ? forwardOpOfBackwardNode(op) : op;
    if (forwardOp.empty())
        return {};
    const std::string path = layer >= 0 && layer < int(layers_.size()) ? layers_[layer].path : std::string();
    std::string where = sourceOfOp(graph_, forwardOp, path);
    if (where.empty() && !path.empty())
        where = sourceOfOp(graph_, forwardOp, std::string());
    return where;
}

void TorchScriptModel::setNodeTracing(bool on)
{
    if (on && (!traced_ || tracedHalf_ != halfEmulation_)) {
        traced_ = std::make_unique<NodeTracedGraph>(
            traceEveryNode(instrumentForward(module_, layerIds_, /*roundOutputsThroughHalf=*/halfEmulation_)));
        tracedFunction_ = runnable(traced_->graph, "nanscope.node_traced_forward");
        tracedHalf_ = halfEmulation_;
    }
    if (on)
        events_.clear();
    nodeTracing_ = on;
}

std::optional<CodeOrigin> TorchScriptModel::forwardCodeOrigin() const
{
    return traced_ ? nanscope::forwardCodeOrigin(traced_->nodes, events_) : std::nullopt;
}

std::optional<CodeOrigin> TorchScriptModel::backwardCodeOrigin(std::uint64_t sequence) const
{
    return traced_ ? nanscope::backwardCodeOrigin(traced_->nodes, events_, sequence) : std::nullopt;
}

void TorchScriptModel::save(const std::string &path) const
{
    try {
        module_.save(path);
    } catch (const std::exception &e) {
        std::string m = e.what();
        throw std::runtime_error("cannot save '" + path + "': " + m.substr(0, m.find('\n')));
    }
}

}  // namespace nanscope
