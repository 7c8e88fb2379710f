#include "model/torchscript_node_trace.h"

#include "probe/node_trace_op.h"
#include "probe/observe_op.h"

#include <unordered_map>

namespace nanscope {

namespace {

namespace jit = torch::jit;

bool isTensor(const jit::Value *v) { return v->type()->kind() == c10::TypeKind::TensorType; }

bool traced(const jit::Node *n)
{
    const c10::Symbol k = n->kind();
    return k != c10::prim::Constant && k != c10::prim::GetAttr && k != c10::prim::Return && k != c10::prim::Param;
}

void collect(jit::Block *block, std::vector<jit::Node *> &out)
{
    for (jit::Node *n : block->nodes()) {
        out.push_back(n);
        for (jit::Block *sub : n->blocks())
            collect(sub, out);
    }
}

class Tracer {
public:
    explicit Tracer(InstrumentedGraph &g) : g_(g), graph_(*g.graph) {}

    NodeTracedGraph run()
    {
        std::vector<jit::Node *> all;
        collect(graph_.block(), all);
        for (jit::Node *n : all)
            ids_.emplace(n, int(ids_.size()));
        NodeTracedGraph out;
        for (jit::Node *n : all)
            out.nodes.push_back(describe(n));
        for (jit::Node *n : all)
            if (traced(n))
                insertTraces(n);
        graph_.lint();
        out.graph = g_.graph;
        return out;
    }

private:
    // The node that made `v`: its definition, or for a block's parameter (a loop-carried value)
    // the node that owns the block.
    int producer(const jit::Value *v) const
    {
        const jit::Node *def = v->node();
        if (def->kind() == c10::prim::Param)
            def = def == graph_.param_node() ? nullptr : def->owningBlock()->owningNode();
        if (!def)
            return -1;
        const auto it = ids_.find(def);
        return it == ids_.end() ? -1 : it->second;
    }

    CodeNode describe(jit::Node *n) const
    {
        CodeNode c;
        const auto p = g_.paths.find(n);
        c.path = p == g_.paths.end() ? std::string() : p->second;
        c.op = n->kind().toQualString();
        c.source = sourceLineOf(n);
        c.escapes = n->kind() == observeSymbol();
        c.roundsHalf = n->kind() == roundHalfSymbol();
        c.container = n->kind() == c10::prim::ListConstruct || n->kind() == c10::prim::TupleConstruct;
        auto add = [&c, this](const jit::Value *v) {
            const int id = producer(v);
            if (id >= 0)
                c.preds.push_back(id);
        };
        for (const jit::Value *in : n->inputs())
            add(in);
        for (const jit::Block *b : n->blocks())
            for (const jit::Value *ret : b->outputs())
                add(ret);
        return c;
    }

    jit::Value *constant(std::int64_t v)
    {
        const auto it = constants_.find(v);
        if (it != constants_.end())
            return it->second;
        jit::WithInsertPoint atStart(graph_.block()->nodes().front());
        jit::Value *c = graph_.insertConstant(c10::IValue(v));
        constants_.emplace(v, c);
        return c;
    }

    jit::Node *trace(jit::Value *v, int id, int slot)
    {
        jit::Node *t = graph_.create(traceNodeSymbol(), {v, constant(id), constant(slot)}, 1);
        t->output()->setType(v->type());
        return t;
    }

    void insertTraces(jit::Node *n)
    {
        const int id = ids_.at(n);
        for (std::size_t i = 0; i < n->inputs().size(); ++i) {
            jit::Value *in = n->inputs()[i];
            if (!isTensor(in))
                continue;
            jit::Node *t = trace(in, id, int(i));
            t->insertBefore(n);
            n->replaceInput(i, t->output());
        }
        jit::Node *after = n;
        for (jit::Value *out : n->outputs()) {
            if (!isTensor(out))
                continue;
            jit::Node *t = trace(out, id, -1);
            t->insertAfter(after);
            out->replaceAllUsesAfterNodeWith(t, t->output());
            after = t;
        }
    }

    InstrumentedGraph &g_;
    jit::Graph &graph_;
    std::unordered_map<const jit::Node *, int> ids_;
    std::unordered_map<std::int64_t, jit::Value *> constants_;
};

}  // namespace

NodeTracedGraph traceEveryNode(InstrumentedGraph g)
{
    Tracer tracer(g);
    return tracer.run();
}

}  // namespace nanscope
