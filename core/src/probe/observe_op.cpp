#include "probe/observe_op.h"

#include "model_api/autocast_scope.h"
#include "probe/probe.h"

#include <c10/util/Optional.h>
#include <torch/library.h>

namespace nanscope {

namespace {

thread_local Probe *t_probe = nullptr;

at::Tensor observeKernel(const at::Tensor &x, const c10::optional<at::Tensor> &input, int64_t layer)
{
    if (Probe *probe = t_probe)
        probe->observeAtProducer(int(layer), input ? *input : at::Tensor(), x);
    return x;  // the same tensor: autograd and aliasing see no op at all
}

// Every tensor a module's output holds, in tuples (an LSTM's (output, (h, c))), lists and dict
// values, at any depth.
void observeEach(Probe &probe, int layer, const at::Tensor &input, const c10::IValue &v)
{
    if (v.isTensor()) {
        probe.observeAtProducer(layer, input, v.toTensor());
    } else if (v.isTuple()) {
        for (const c10::IValue &e : v.toTupleRef().elements())
            observeEach(probe, layer, input, e);
    } else if (v.isList()) {
        for (const c10::IValue &e : v.toListRef())
            observeEach(probe, layer, input, e);
    } else if (v.isGenericDict()) {
        for (const auto &entry : v.toGenericDict())
            observeEach(probe, layer, input, entry.value());
    }
}

// Boxed: the value is of any type, and goes back on the stack as it came.
void observeValueKernel(const c10::OperatorHandle &, torch::jit::Stack *stack)
{
    const std::int64_t layer = stack->back().toInt();
    const c10::IValue input = (*stack)[stack->size() - 2];
    stack->resize(stack->size() - 2);
    if (Probe *probe = t_probe)
        observeEach(*probe, int(layer), input.isTensor() ? input.toTensor() : at::Tensor(), stack->back());
}

// A new tensor in every case, as the schema (no alias annotation) promises.
at::Tensor roundHalfKernel(const at::Tensor &x)
{
    const at::Tensor r = roundThroughHalf(x);
    return r.is_same(x) ? x.clone() : r;
}

}  // namespace

// In this translation unit so that linking ObserveScope (from a static library) keeps it.
TORCH_LIBRARY(nanscope, m)
{
    m.def("observe(Tensor(a) x, Tensor? input, int layer) -> Tensor(a)", &observeKernel);
    m.def("observe_value(Any(a) x, Tensor? input, int layer) -> Any(a)",
          torch::CppFunction::makeFromBoxedFunction<&observeValueKernel>());
    // Registered without a dispatch key: composite, so autograd records the casts inside it.
    m.def("round_half(Tensor x) -> Tensor", &roundHalfKernel);
}

ObserveScope::ObserveScope(Probe *probe) : previous_(t_probe) { t_probe = probe; }

ObserveScope::~ObserveScope() { t_probe = previous_; }

c10::Symbol observeSymbol() { return c10::Symbol::fromQualString("nanscope::observe"); }

c10::Symbol observeValueSymbol() { return c10::Symbol::fromQualString("nanscope::observe_value"); }

c10::Symbol roundHalfSymbol() { return c10::Symbol::fromQualString("nanscope::round_half"); }

}  // namespace nanscope
