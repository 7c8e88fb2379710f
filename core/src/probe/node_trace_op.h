#pragma once
// `nanscope::trace_node(Tensor(a) x, int node, int slot) -> Tensor(a)`: the identity op a graph
// traced node by node calls on each input (slot 0, 1, ...) of every node before it runs and on
// each output (slot -1) after. While a NodeTraceScope is alive on the thread, each call appends
// which kinds of non-finite value the tensor holds, with the autograd sequence number reached:
// the forward ops of a node made the autograd nodes numbered between its events.
#include "rules/code_origin.h"

#include <ATen/core/interned_strings.h>

#include <cstdint>
#include <vector>

namespace nanscope {

class NodeTraceScope {
public:
    explicit NodeTraceScope(std::vector<NodeEvent> *sink);
    ~NodeTraceScope();
    NodeTraceScope(const NodeTraceScope &) = delete;
    NodeTraceScope &operator=(const NodeTraceScope &) = delete;

private:
    std::vector<NodeEvent> *previous_;
};

c10::Symbol traceNodeSymbol();

}  // namespace nanscope
