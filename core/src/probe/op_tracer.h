#pragma once
// The second tier of the origin: while active on this thread, every op's inputs and outputs are
// checked and the first op that turned finite inputs into a non-finite output is remembered,
// with the backward node it ran in (SqrtBackward0, say). It costs a multiple of a step, so the
// session only runs it when re-running the first non-finite step.
#include <cstdint>
#include <memory>
#include <string>

namespace nanscope {

struct TracedOp {
    bool found = false;
    std::string op;       // "aten::log", or the backward node: "SqrtBackward0"
    std::string innerOp;  // in backward: the aten op inside the node that made the value
    bool inBackward = false;
    std::int64_t sequence = -1;  // in backward: the node's autograd sequence number
};

class OpTracer {
public:
    OpTracer();   // starts tracing on the calling thread
    ~OpTracer();  // stops
    OpTracer(const OpTracer &) = delete;
    OpTracer &operator=(const OpTracer &) = delete;
    TracedOp result() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

}  // namespace nanscope
