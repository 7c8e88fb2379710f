#include "probe/observe_op.h"

#include "training/autocast_scope.h"
#include "probe/probe.h"

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
    // Registered without a dispatch key: composite, so autograd records the casts inside it.
    m.def("round_half(Tensor x) -> Tensor", &roundHalfKernel);
}

ObserveScope::ObserveScope(Probe *probe) : previous_(t_probe) { t_probe = probe; }

ObserveScope::~ObserveScope() { t_probe = previous_; }

c10::Symbol observeSymbol() { return c10::Symbol::fromQualString("nanscope::observe"); }

c10::Symbol roundHalfSymbol() { return c10::Symbol::fromQualString("nanscope::round_half"); }

}  // namespace nanscope
