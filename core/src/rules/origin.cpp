#include "rules/origin.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace nanscope {

namespace {

Origin at(const OriginInputs &in, Phase phase, int layer, bool produced)
{
    Origin o;
    o.step = in.record.step;
    o.phase = phase;
    o.layer = layer;
    o.layerPath = layer >= 0 ? in.layers[layer].path : std::string();
    o.produced = produced;
    return o;
}

// Leaves in forward order: the layers that compute (containers only pass their children's work).
std::vector<int> leavesInForwardOrder(const OriginInputs &in)
{
    std::vector<bool> hasChild(in.layers.size(), false);
    for (const Layer &l : in.layers)
        if (l.parent >= 0)
            hasChild[l.parent] = true;
    std::vector<int> leaves;
    for (int id : in.forwardOrder)
        if (!hasChild[id])
            leaves.push_back(id);
    return leaves;
}

// The call k of a layer that ran `of` times, when it ran more than once.
void nameCall(Origin &o, const std::vector<LayerCall> &calls, std::size_t made)
{
    const auto sameLayer = [&](const LayerCall &c) { return c.layer == calls[made].layer; };
    const int of = int(std::count_if(calls.begin(), calls.end(), sameLayer));
    if (of > 1) {
        o.call = int(std::count_if(calls.begin(), calls.begin() + std::ptrdiff_t(made) + 1, sameLayer));
        o.calls = of;
    }
}

// The forward origin by call (OriginInputs::calls): the first call whose inputs were finite and
// whose output was not, else the first whose output was not; named with its call when its layer
// ran more than once. Invalid when no call's output was non-finite.
Origin forwardByCall(const OriginInputs &in)
{
    const std::vector<LayerCall> &calls = *in.calls;
    auto made = std::find_if(calls.begin(), calls.end(),
                             [](const LayerCall &c) { return c.outputNonFinite && c.inputFinite; });
    if (made == calls.end())
        made = std::find_if(calls.begin(), calls.end(), [](const LayerCall &c) { return c.outputNonFinite; });
    if (made == calls.end())
        return {};
    Origin o = at(in, Phase::Forward, made->layer, made->inputFinite);
    nameCall(o, calls, std::size_t(made - calls.begin()));
    return o;
}

// The backward origin by call (OriginInputs::backward): the first gradient, in the order backward
// ran, that was not finite went into call j's output; the backward of the call that took that
// output as its input (with a finite gradient into its own output) made it. Invalid when no call
// took it (the loss, or code between two calls, did): the map's rule decides then.
Origin backwardByCall(const OriginInputs &in)
{
    const std::vector<LayerCall> &calls = *in.calls;
    const auto first = std::find_if(in.backward->begin(), in.backward->end(),
                                    [](const BackwardCall &b) { return b.nonFinite; });
    if (first == in.backward->end())
        return {};
    for (std::size_t k = 0; k < calls.size(); ++k)
        if (calls[k].fromCall == first->call && calls[k].outputGradFinite) {
            Origin o = at(in, Phase::Backward, calls[k].layer, true);
            nameCall(o, calls, k);
            return o;
        }
    return {};
}

}  // namespace

Origin findOrigin(const OriginInputs &in)
{
    const StepRecord &r = in.record;
    // Parameters first: a model whose weights are already bad poisons everything downstream.
    for (std::size_t i = 0; i < r.layers.size(); ++i)
        if (r.layers[i].params.hasNonFinite())
            return at(in, in.previousStepParamsFinite ? Phase::Update : Phase::Parameter, int(i),
                      in.previousStepParamsFinite);
    if (r.inputHealth.hasNonFinite())
        return at(in, Phase::Input, -1, true);
    if (in.calls && !in.calls->empty()) {
        if (Origin o = forwardByCall(in); o.valid())
            return o;
    }
    for (int id : in.forwardOrder)
        if (r.layers[id].forward.hasNonFinite())
            return at(in, Phase::Forward, id, r.layers[id].inputFinite);
    if (r.lossHealth.hasNonFinite())
        return at(in, Phase::Loss, -1, true);
    if (in.calls && in.backward) {
        if (Origin o = backwardByCall(in); o.valid())
            return o;
    }
    // Backward runs from the last layer to the first. The gradient into layer k's output is made
    // by the backward of the layer that consumed it (k+1, or the loss for the last one).
    const std::vector<int> leaves = leavesInForwardOrder(in);
    for (int k = int(leaves.size()) - 1; k >= 0; --k) {
        const LayerHealth &lh = r.layers[leaves[k]];
        if (lh.grad.hasNonFinite())
            return k + 1 < int(leaves.size()) ? at(in, Phase::Backward, leaves[k + 1], true)
                                              : at(in, Phase::Backward, -1, true);
        if (lh.paramGrads.hasNonFinite())
            return at(in, Phase::Backward, leaves[k], true);
    }
    return {};
}

void applyCodeOrigin(Origin &o, const CodeOrigin &code, const std::vector<Layer> &layers, bool forward)
{
    for (const Layer &l : layers)
        if (l.path == code.path) {
            if (o.layer != l.id)  // the op names another module: the call was the map's
                o.call = o.calls = 0;
            o.layer = l.id;
            o.layerPath = l.path;
            break;
        }
    if (forward) {
        o.op = code.op;
        o.produced = true;
        o.chain = code.chain;
    }
    if (!code.source.empty())
        o.source = code.source;
}

std::string explainOrigin(const Origin &o, const StepRecord &r)
{
    std::ostringstream s;
    // A layer with an empty path is the root: the model's own forward, outside its children.
    const std::string where = o.layer < 0           ? std::string("the loss")
                              : o.layerPath.empty() ? std::string("the model's own forward")
                                                    : "layer '" + o.layerPath + "'";
    switch (o.phase) {
    case Phase::None: return {};
    case Phase::Input:
        s << "The input batch holds " << r.inputHealth.nan << " NaN, " << r.inputHealth.posInf << " +Inf and "
          << r.inputHealth.negInf << " -Inf values";
        if (!r.badSamples.empty()) {
            s << " (samples";
            for (std::int64_t i : r.badSamples)
                s << ' ' << i;
            s << ')';
        }
        s << "; every layer downstream only passes them on.";
        break;
    case Phase::Forward:
        if (o.layerPath.empty())
            s << (o.produced ? "The model's own forward (outside its modules) made a non-finite value"
                             : "The model's own forward received non-finite inputs");
        else
            s << (o.produced ? "Layer '" + o.layerPath + "' turned finite inputs into non-finite outputs"
                             : "Layer '" + o.layerPath + "' received non-finite inputs");
        break;
    case Phase::Loss: s << "The model's outputs are finite but the loss is not"; break;
    case Phase::Backward:
        s << "The forward pass is finite; the backward pass of " << where << " made a non-finite gradient";
        break;
    case Phase::Parameter:
        s << "The parameters of layer '" << o.layerPath << "' were already non-finite before this step";
        break;
    case Phase::Update:
        s << "The optimizer update of the previous step made the parameters of layer '" << o.layerPath
          << "' non-finite";
        break;
    }
    if (o.calls > 1 && (o.phase == Phase::Forward || o.phase == Phase::Backward))
        s << " in call " << o.call << " of " << o.calls;
    if (!o.op.empty())
        s << " (first op: " << o.op << ")";
    if (o.phase != Phase::Input)
        s << '.';
    if (o.chain.find(" became ") != std::string::npos)
        s << ' ' << char(std::toupper(static_cast<unsigned char>(o.chain[0]))) << o.chain.substr(1) << '.';
    return s.str();
}

}  // namespace nanscope
