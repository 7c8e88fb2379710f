#pragma once
// An instrumented forward graph traced node by node, for the op-level re-run of a step: every
// node's tensor inputs are checked before it runs and its tensor outputs after
// (nanscope::trace_node), and each node is described (module, op, source line, the nodes it
// reads) for code_origin.h. Far slower than the map, so only the re-run uses it.
#include "model/torchscript_instrument.h"
#include "rules/code_origin.h"

#include <memory>
#include <vector>

namespace nanscope {

struct NodeTracedGraph {
    std::shared_ptr<torch::jit::Graph> graph;  // takes `self` first, like forward
    std::vector<CodeNode> nodes;               // by the node ids the trace events carry
};

// Consumes a freshly instrumented graph (its nodes get trace ops around them).
NodeTracedGraph traceEveryNode(InstrumentedGraph g);

}  // namespace nanscope
