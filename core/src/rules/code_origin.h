#pragma once
// The origin of a non-finite value in the model's own code: from the events of a forward pass
// traced node by node (node_trace_op.h), the op that made the kind of value that left a module —
// NaN made from NaN-free inputs, or Inf from Inf-free ones — with the module whose forward holds
// it (the root "" for top-level code) and its source line, and the chain of kinds behind it:
// attention code writes -Inf on purpose and a fully masked row becomes NaN in softmax; the
// softmax is the origin, the mask its cause. In backward, the forward op whose autograd node
// made the first non-finite gradient.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nanscope {

// What a node trace event saw (probe/node_trace_op.h; plain values, no LibTorch here).
struct NonFiniteKinds {
    bool nan = false, posInf = false, negInf = false;

    bool any() const { return nan || posInf || negInf; }
    bool inf() const { return posInf || negInf; }
    NonFiniteKinds &operator|=(const NonFiniteKinds &o)
    {
        nan |= o.nan;
        posInf |= o.posInf;
        negInf |= o.negInf;
        return *this;
    }
};

struct NodeEvent {
    int node = -1;
    int slot = -1;  // the input's position, or -1 for an output
    NonFiniteKinds kinds;
    std::uint64_t sequence = 0;  // at::sequence_number::peek() when the event was taken
};

struct CodeNode {
    std::string path;         // the module whose forward holds the node
    std::string op;           // "aten::softmax"
    std::string source;       // "model.py:42", or empty
    bool escapes = false;     // an observe op: its value leaves a module
    bool roundsHalf = false;  // fp16 emulation's rounding of a module's output
    bool container = false;   // builds a list or tuple of tensors: its inputs are its users' inputs
    std::vector<int> preds;   // the nodes whose values it reads (through blocks and containers)
};

struct CodeOrigin {
    std::string path;
    std::string op;
    std::string source;
    std::string chain;  // "-Inf from aten::masked_fill at m.py:41 became NaN in aten::softmax at m.py:42"
};

// The producer of the first non-finite value that left a module; empty when none did (or the
// trace holds no such value).
std::optional<CodeOrigin> forwardCodeOrigin(const std::vector<CodeNode> &nodes, const std::vector<NodeEvent> &events);

// The node whose forward ops made the autograd node numbered `sequence`.
std::optional<CodeOrigin> backwardCodeOrigin(const std::vector<CodeNode> &nodes, const std::vector<NodeEvent> &events,
                                             std::uint64_t sequence);

}  // namespace nanscope
