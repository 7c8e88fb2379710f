#include "probe/node_trace_op.h"

#include <ATen/ATen.h>
#include <ATen/SequenceNumber.h>
#include <ATen/record_function.h>
#include <torch/library.h>

namespace nanscope {

namespace {

thread_local std::vector<NodeEvent> *t_sink = nullptr;

at::Tensor traceNodeKernel(const at::Tensor &x, int64_t node, int64_t slot)
{
    if (std::vector<NodeEvent> *sink = t_sink) {
        // Our own checks are not the model's ops: no op tracer and no autograd sees them.
        at::DisableRecordFunctionGuard noRecord;
        at::NoGradGuard noGrad;
        NodeEvent e;
        e.node = int(node);
        e.slot = int(slot);
        if (x.defined() && at::isFloatingType(x.scalar_type()) && x.numel() > 0) {
            const at::Tensor d = x.detach();
            e.kinds.nan = d.isnan().any().item<bool>();
            e.kinds.posInf = d.isposinf().any().item<bool>();
            e.kinds.negInf = d.isneginf().any().item<bool>();
        }
        e.sequence = at::sequence_number::peek();
        sink->push_back(e);
    }
    return x;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(nanscope, m)
{
    m.def("trace_node(Tensor(a) x, int node, int slot) -> Tensor(a)", &traceNodeKernel);
}

NodeTraceScope::NodeTraceScope(std::vector<NodeEvent> *sink) : previous_(t_sink) { t_sink = sink; }

NodeTraceScope::~NodeTraceScope() { t_sink = previous_; }

c10::Symbol traceNodeSymbol() { return c10::Symbol::fromQualString("nanscope::trace_node"); }

}  // namespace nanscope
