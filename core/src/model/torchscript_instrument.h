#pragma once
// Instrumenting a TorchScript module's forward graph: inline every call, give each node the
// dotted path of the module instance it came from (read from its inlined call stack), and insert
// an observe op after every value that leaves a module, once per module it leaves. Instance
// paths, not call sites: `layer1.0` and `layer1.1` share one type and one graph, so only the
// inlined graph can tell them apart.
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <memory>
#include <string>
#include <unordered_map>

namespace nanscope {

struct InstrumentedGraph {
    std::shared_ptr<torch::jit::Graph> graph;                         // takes `self` first, like forward
    std::unordered_map<const torch::jit::Node *, std::string> paths;  // module path of each node
    int observeOps = 0;
};

// `layerIds`: module path -> layer id, for every module of named_modules(). With
// `roundOutputsThroughHalf` (fp16 emulated on the CPU), every value that leaves a module other
// than the root is rounded through fp16 first (nanscope::round_half), so the module's observers
// and every later consumer see what fp16 would hold: past 65504, Inf.
InstrumentedGraph instrumentForward(const torch::jit::Module &root,
                                    const std::unordered_map<std::string, int> &layerIds,
                                    bool roundOutputsThroughHalf = false);

// "file:line" of the node in the user's original source, when the file carries it; empty otherwise.
std::string sourceLineOf(const torch::jit::Node *n);

// "file:line" of the first `op` ("aten::log") of module `path` in the user's original source,
// when the file carries it; empty otherwise.
std::string sourceOfOp(const InstrumentedGraph &g, const std::string &op, const std::string &path);

}  // namespace nanscope
