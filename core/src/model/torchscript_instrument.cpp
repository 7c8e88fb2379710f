#include "model/torchscript_instrument.h"

#include "probe/observe_op.h"

#include <torch/csrc/jit/ir/scope.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <optional>
#include <tuple>
#include <vector>

namespace nanscope {

namespace {

namespace jit = torch::jit;

const char *const kGraphOutput = "\x01output";  // the path of the graph's return: outside every module

std::string join(const std::string &a, const std::string &b) { return a.empty() ? b : a + "." + b; }

bool within(const std::string &path, const std::string &module)
{
    return module.empty() || path == module ||
           (path.size() > module.size() && path.compare(0, module.size(), module) == 0 && path[module.size()] == '.');
}

// Module instance paths from inlined call stacks. Each entry of a call stack names the attribute
// the callee was fetched from ("layer1", then "0", then "conv1"); SELF is a method of the same
// module. A callee fetched through a chain (self.layer1[0]) names only the last attribute: it is
// found among the descendants by that name and its type.
class PathResolver {
public:
    explicit PathResolver(const jit::Module &root) : root_(root) {}

    std::string pathOf(const jit::Node *n, const std::string &inherited)
    {
        const auto cs = n->callstack();
        if (!cs)
            return inherited;  // nodes inside If/Loop blocks may carry none: their owner's module
        const auto *key = cs->get();
        const auto hit = cache_.find(key);
        if (hit != cache_.end())
            return hit->second;
        std::string path = resolve(**cs);
        cache_.emplace(key, path);
        return path;
    }

private:
    std::string resolve(jit::InlinedCallStack &cs) const
    {
        jit::Module current = root_;
        std::string path;
        for (const auto &entry : cs.vec()) {
            const auto &info = std::get<2>(entry);
            if (!info)
                continue;  // a plain function, not a module's method
            const std::string name = info->instance_name();
            if (name == "SELF" || name == "INSTANCE_NAME_UNKNOWN")
                continue;
            bool found = false;
            for (const auto &child : current.named_children())
                if (child.name == name) {
                    current = child.value;
                    path = join(path, name);
                    found = true;
                    break;
                }
            if (found)
                continue;
            for (const auto &item : current.named_modules()) {
                const auto dot = item.name.rfind('.');
                const std::string last = dot == std::string::npos ? item.name : item.name.substr(dot + 1);
                if (!item.name.empty() && last == name && item.value.type() == info->class_type()) {
                    current = item.value;
                    path = join(path, item.name);
                    break;
                }
            }
        }
        return path;
    }

    jit::Module root_;
    std::unordered_map<const jit::InlinedCallStack *, std::string> cache_;
};

// Where the root's own forward is written: a node without a call stack that lies here is root
// code; one elsewhere lost its call stack in a pass (the if/raise checks of an LSTM) and belongs
// to the module whose code surrounds it.
struct RootSource {
    std::vector<std::tuple<const void *, std::size_t, std::size_t>> spans;  // source, start, end

    explicit RootSource(const jit::Graph &uninlined)
    {
        for (const jit::Node *n : uninlined.nodes()) {
            const auto src = n->sourceRange().source();
            if (src)
                spans.emplace_back(src.get(), n->sourceRange().start(), n->sourceRange().end());
        }
    }
    bool holds(const jit::Node *n) const
    {
        const auto src = n->sourceRange().source();
        if (!src)
            return true;
        for (const auto &[source, start, end] : spans)
            if (source == src.get() && n->sourceRange().start() >= start && n->sourceRange().end() <= end)
                return true;
        return false;
    }
};

void assignPaths(jit::Block *block, const std::string &owner, PathResolver &resolver, const RootSource &root,
                 std::unordered_map<const jit::Node *, std::string> &paths)
{
    std::string previous = owner;  // the path of the last node here that had a call stack
    for (jit::Node *n : block->nodes()) {
        std::string p = owner;
        if (n->callstack()) {
            // A block's nodes belong to its owner's module or one inside it.
            p = resolver.pathOf(n, owner);
            if (!within(p, owner))
                p = owner;
            previous = p;
        } else if (!root.holds(n)) {
            p = previous;
        }
        paths[n] = p;
        for (jit::Block *sub : n->blocks())
            assignPaths(sub, p, resolver, root, paths);
    }
}

// Enclosing modules of `path`, deepest first, without the root.
std::vector<std::string> enclosing(const std::string &path)
{
    std::vector<std::string> out;
    std::string p = path;
    while (!p.empty()) {
        out.push_back(p);
        const auto dot = p.rfind('.');
        p = dot == std::string::npos ? std::string() : p.substr(0, dot);
    }
    return out;
}

bool isTensor(const jit::Value *v) { return v->type()->kind() == c10::TypeKind::TensorType; }

// A tuple, list, dict or optional with a tensor somewhere inside: an LSTM's (output, (h, c)),
// MultiheadAttention's (output, weights?), a model's dict of heads.
bool holdsTensors(const c10::TypePtr &t)
{
    switch (t->kind()) {
    case c10::TypeKind::TensorType: return true;
    case c10::TypeKind::TupleType:
    case c10::TypeKind::ListType:
    case c10::TypeKind::DictType:
    case c10::TypeKind::OptionalType:
        for (const c10::TypePtr &inner : t->containedTypes())
            if (holdsTensors(inner))
                return true;
        return false;
    default: return false;
    }
}

class Instrumenter {
public:
    Instrumenter(InstrumentedGraph &g, const std::unordered_map<std::string, int> &layerIds, bool roundThroughHalf)
        : g_(g), graph_(*g.graph), layerIds_(layerIds), roundThroughHalf_(roundThroughHalf)
    {
        jit::WithInsertPoint atStart(graph_.block()->nodes().front());
        none_ = graph_.insertNode(graph_.createNone())->output();
        findModuleInputs(graph_.block());
        // The root's input: the first tensor argument of forward (after self).
        for (jit::Value *in : graph_.inputs())
            if (isTensor(in)) {
                inputs_.emplace("", in);
                break;
            }
    }

    void run(jit::Block *block)
    {
        std::vector<jit::Node *> nodes(block->nodes().begin(), block->nodes().end());
        for (jit::Node *n : nodes) {
            for (jit::Block *sub : n->blocks())
                run(sub);
            for (jit::Value *v : n->outputs())
                if (holdsTensors(v->type()))
                    instrument(v, g_.paths[n]);
        }
    }

private:
    std::string pathOfUser(const jit::Node *user) const
    {
        if (user == graph_.return_node())
            return kGraphOutput;
        if (user->kind() == c10::prim::Return)  // a sub-block's outputs belong to its owner
            return g_.paths.at(user->owningBlock()->owningNode());
        return g_.paths.at(user);
    }

    std::string pathOfDefinition(const jit::Value *v) const
    {
        const jit::Node *def = v->node();
        if (def->kind() == c10::prim::Param)
            return def == graph_.param_node() ? std::string() : g_.paths.at(def->owningBlock()->owningNode());
        return g_.paths.at(def);
    }

    // The first tensor each module reads from outside itself: its input, for the probe's
    // "were the inputs finite" question.
    void findModuleInputs(jit::Block *block)
    {
        for (jit::Node *n : block->nodes()) {
            const std::string &p = g_.paths[n];
            for (jit::Value *in : n->inputs()) {
                if (!isTensor(in))
                    continue;
                const std::string def = pathOfDefinition(in);
                for (const std::string &m : enclosing(p))
                    if (!within(def, m))
                        inputs_.emplace(m, in);  // keeps the first
            }
            for (jit::Block *sub : n->blocks())
                findModuleInputs(sub);
        }
    }

    static bool dominates(const jit::Value *def, jit::Node *user)
    {
        const jit::Node *d = def->node();
        if (d->kind() != c10::prim::Param)
            return user->isDominatedBy(d);
        for (const jit::Block *b = user->owningBlock(); b;
             b = b->owningNode() ? b->owningNode()->owningBlock() : nullptr)
            if (b == d->owningBlock())
                return true;
        return false;
    }

    jit::Value *layerConstant(int id)
    {
        auto it = constants_.find(id);
        if (it != constants_.end())
            return it->second;
        jit::WithInsertPoint atStart(graph_.block()->nodes().front());
        jit::Value *c = graph_.insertConstant(c10::IValue(std::int64_t(id)));
        constants_.emplace(id, c);
        return c;
    }

    void instrument(jit::Value *v, const std::string &path)
    {
        std::vector<std::string> chain = enclosing(path);
        chain.push_back("");  // the root, left only by the graph's outputs
        const std::vector<jit::Use> uses = v->uses();
        std::vector<std::size_t> leaves(uses.size(), 0);
        std::size_t deepest = 0;
        for (std::size_t u = 0; u < uses.size(); ++u) {
            const std::string q = pathOfUser(uses[u].user);
            std::size_t k = 0;
            while (k < chain.size() && !(q != kGraphOutput && within(q, chain[k])))
                ++k;
            leaves[u] = k;
            deepest = std::max(deepest, k);
        }
        if (deepest == 0)
            return;
        std::vector<jit::Value *> stage(deepest + 1, v);
        jit::Node *after = v->node()->kind() == c10::prim::Param ? nullptr : v->node();
        const bool tensor = isTensor(v);
        if (roundThroughHalf_ && tensor && after && !chain[0].empty()) {
            // Leaving its module, the value becomes what fp16 would hold; uses inside the module
            // keep the unrounded one.
            jit::Node *round = graph_.create(roundHalfSymbol(), {v}, 1);
            round->output()->setType(v->type());
            round->insertAfter(after);
            g_.paths[round] = chain[0];
            after = round;
            stage[0] = round->output();
            rounded_[v] = round->output();
        }
        for (std::size_t i = 0; i < deepest; ++i) {
            stage[i + 1] = stage[i];
            const auto id = layerIds_.find(chain[i]);
            if (id == layerIds_.end() || !after)
                continue;
            jit::Node *obs = graph_.create(tensor ? observeSymbol() : observeValueSymbol(),
                                           {stage[i], none_, layerConstant(id->second)}, 1);
            obs->output()->setType(v->type());
            obs->insertAfter(after);
            const auto in = inputs_.find(chain[i]);
            if (in != inputs_.end() && in->second != v) {
                // The module reads the rounded copy of an input that left another module.
                const auto r = rounded_.find(in->second);
                jit::Value *input = r != rounded_.end() && dominates(r->second, obs) ? r->second : in->second;
                if (dominates(input, obs))
                    obs->replaceInput(1, input);
            }
            g_.paths[obs] = chain[i];
            after = obs;
            stage[i + 1] = obs->output();
            ++g_.observeOps;
        }
        for (std::size_t u = 0; u < uses.size(); ++u)
            if (leaves[u] > 0)
                uses[u].user->replaceInput(uses[u].offset, stage[leaves[u]]);
    }

    InstrumentedGraph &g_;
    jit::Graph &graph_;
    const std::unordered_map<std::string, int> &layerIds_;
    jit::Value *none_ = nullptr;
    std::unordered_map<std::string, jit::Value *> inputs_;
    std::unordered_map<int, jit::Value *> constants_;
    bool roundThroughHalf_ = false;
    std::unordered_map<const jit::Value *, jit::Value *> rounded_;  // value -> its rounded copy
};

void collect(jit::Block *block, std::vector<jit::Node *> &out)
{
    for (jit::Node *n : block->nodes()) {
        out.push_back(n);
        for (jit::Block *sub : n->blocks())
            collect(sub, out);
    }
}

}  // namespace

InstrumentedGraph instrumentForward(const torch::jit::Module &root,
                                    const std::unordered_map<std::string, int> &layerIds, bool roundOutputsThroughHalf)
{
    InstrumentedGraph g;
    g.graph = root.get_method("forward").graph()->copy();
    const RootSource rootSource(*g.graph);
    jit::Inline(*g.graph);
    PathResolver resolver(root);
    assignPaths(g.graph->block(), std::string(), resolver, rootSource, g.paths);
    Instrumenter ins(g, layerIds, roundOutputsThroughHalf);
    ins.run(g.graph->block());
    g.graph->lint();
    return g;
}

std::string sourceOfOp(const InstrumentedGraph &g, const std::string &op, const std::string &path)
{
    std::vector<jit::Node *> nodes;
    collect(g.graph->block(), nodes);
    for (jit::Node *n : nodes) {
        if (n->kind().toQualString() != op)
            continue;
        const auto p = g.paths.find(n);
        if (!path.empty() && (p == g.paths.end() || !within(p->second, path)))
            continue;
        if (std::string line = sourceLineOf(n); !line.empty())
            return line;
    }
    return {};
}

std::string sourceLineOf(const torch::jit::Node *n)
{
    const auto original = n->sourceRange().findSourceRangeThatGenerated();
    const jit::SourceRange &range = original ? *original : n->sourceRange();
    if (const auto flc = range.file_line_col())
        return std::get<0>(*flc) + ":" + std::to_string(std::get<1>(*flc));
    return {};
}

}  // namespace nanscope
