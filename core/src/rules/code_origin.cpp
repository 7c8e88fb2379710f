#include "rules/code_origin.h"

#include <unordered_map>
#include <unordered_set>

namespace nanscope {

namespace {

// One execution of a node: what its inputs held as it started and its outputs as it ended, and
// the autograd sequence numbers its ops took.
struct Execution {
    int node = -1;
    NonFiniteKinds in, out;
    std::uint64_t firstSequence = 0, endSequence = 0;
};

std::vector<Execution> executions(const std::vector<CodeNode> &nodes, const std::vector<NodeEvent> &events)
{
    std::vector<Execution> out;
    std::unordered_map<int, NonFiniteKinds> inputs;  // node -> its inputs in this execution
    std::unordered_map<int, std::uint64_t> started;  // node -> sequence at its first input
    std::uint64_t previous = events.empty() ? 0 : events.front().sequence;
    for (const NodeEvent &e : events) {
        if (e.node < 0 || e.node >= int(nodes.size()))
            continue;
        if (e.slot >= 0) {
            if (!inputs.count(e.node))
                started[e.node] = e.sequence;
            inputs[e.node] |= e.kinds;
            previous = e.sequence;
            continue;
        }
        Execution x;
        x.node = e.node;
        x.out = e.kinds;
        x.endSequence = e.sequence;
        const auto s = started.find(e.node);
        x.firstSequence = s != started.end() ? s->second : previous;
        if (const auto in = inputs.find(e.node); in != inputs.end())
            x.in = in->second;
        for (int p : nodes[e.node].preds)  // a list built for cat, say: its tensors are this node's inputs
            if (nodes[p].container)
                if (const auto in = inputs.find(p); in != inputs.end())
                    x.in |= in->second;
        inputs.erase(e.node);
        started.erase(e.node);
        previous = e.sequence;
        out.push_back(x);
    }
    return out;
}

std::unordered_set<int> ancestors(const std::vector<CodeNode> &nodes, int from)
{
    std::unordered_set<int> seen{from};
    std::vector<int> todo{from};
    while (!todo.empty()) {
        const int n = todo.back();
        todo.pop_back();
        for (int p : nodes[n].preds)
            if (seen.insert(p).second)
                todo.push_back(p);
    }
    return seen;
}

bool hasKind(const NonFiniteKinds &k, bool nan) { return nan ? k.nan : k.inf(); }

// The first execution among `within` that made the kind (NaN, else Inf) from inputs free of it.
const Execution *firstMaker(const std::vector<Execution> &runs, const std::unordered_set<int> &within, bool nan)
{
    for (const Execution &x : runs)
        if (within.count(x.node) && hasKind(x.out, nan) && !hasKind(x.in, nan))
            return &x;
    return nullptr;
}

std::string infName(const NonFiniteKinds &k) { return k.posInf && k.negInf ? "Inf" : k.negInf ? "-Inf" : "+Inf"; }

CodeOrigin originAt(const std::vector<CodeNode> &nodes, int node)
{
    const CodeNode *n = &nodes[node];
    std::string note;
    if (n->roundsHalf && !n->preds.empty()) {  // the value only overflowed when stored in fp16
        n = &nodes[n->preds.front()];
        note = " (past fp16's 65504)";
    }
    return CodeOrigin{n->path, n->op + note, n->source, {}};
}

std::string where(const CodeOrigin &o) { return o.op + (o.source.empty() ? std::string() : " at " + o.source); }

}  // namespace

std::optional<CodeOrigin> forwardCodeOrigin(const std::vector<CodeNode> &nodes, const std::vector<NodeEvent> &events)
{
    const std::vector<Execution> runs = executions(nodes, events);
    const Execution *escape = nullptr;
    for (const Execution &x : runs)
        if (nodes[x.node].escapes && x.out.any()) {
            escape = &x;
            break;
        }
    if (!escape)
        return std::nullopt;
    const bool nan = escape->out.nan;
    const Execution *maker = firstMaker(runs, ancestors(nodes, escape->node), nan);
    if (!maker)
        return std::nullopt;
    CodeOrigin o = originAt(nodes, maker->node);
    if (nan && maker->in.inf()) {
        // NaN from Inf: Inf - Inf, 0 * Inf, a softmax over a row of -Inf. Say where the Inf came from.
        const Execution *inf = firstMaker(runs, ancestors(nodes, maker->node), false);
        if (inf && inf != maker) {
            const CodeOrigin cause = originAt(nodes, inf->node);
            o.chain = infName(inf->out) + " from " + where(cause) + " became NaN in " + where(o);
        }
    }
    if (o.chain.empty())
        o.chain = (nan ? std::string("NaN") : infName(maker->out)) + " born in " + where(o);
    return o;
}

std::optional<CodeOrigin> backwardCodeOrigin(const std::vector<CodeNode> &nodes, const std::vector<NodeEvent> &events,
                                             std::uint64_t sequence)
{
    const std::vector<Execution> runs = executions(nodes, events);
    const Execution *best = nullptr;
    for (const Execution &x : runs)
        if (x.firstSequence <= sequence && sequence < x.endSequence &&
            (!best || x.endSequence - x.firstSequence < best->endSequence - best->firstSequence))
            best = &x;  // the narrowest: a node inside an If's block, not the If
    if (!best)
        return std::nullopt;
    return originAt(nodes, best->node);
}

}  // namespace nanscope
