#pragma once
// `nanscope::observe(Tensor(a) x, Tensor? input, int layer) -> Tensor(a)`: the identity op an
// instrumented TorchScript graph calls on each module's output. It hands the output (and the
// module's input) to the probe routed to the calling thread, which scans it and attaches the
// gradient hook. A plain op registered with TORCH_LIBRARY: an autograd::Function would break on
// in-place ops downstream (docs/architecture.md).
#include <ATen/core/interned_strings.h>

namespace nanscope {

class Probe;

// While alive, observe ops run on this thread report to `probe` (null: they only pass through).
class ObserveScope {
public:
    explicit ObserveScope(Probe *probe);
    ~ObserveScope();
    ObserveScope(const ObserveScope &) = delete;
    ObserveScope &operator=(const ObserveScope &) = delete;

private:
    Probe *previous_;
};

c10::Symbol observeSymbol();

// `nanscope::observe_value(Any(a) x, Tensor? input, int layer) -> Any(a)`: as observe, for a
// module output that is a tuple, list or dict: every tensor it holds is observed.
c10::Symbol observeValueSymbol();

// `nanscope::round_half(Tensor x) -> Tensor`: x rounded through fp16 and back to its own dtype
// (roundThroughHalf), differentiable through the two casts. A graph instrumented for fp16
// emulation on the CPU calls it on each module's output.
c10::Symbol roundHalfSymbol();

}  // namespace nanscope
