#include "replay/step_compare.h"

#include "nanscope/health_compare.h"
#include "nanscope/health_kinds.h"

#include <algorithm>

namespace nanscope {

namespace {

// Parameters first: weights that differ before the step explain every difference after them.
constexpr HealthKind kCompareOrder[] = {HealthKind::Params, HealthKind::Forward, HealthKind::Grad,
                                        HealthKind::ParamGrads};

// The kind of layer `i` that differs beyond `tolerance`, or null.
const HealthKindInfo *differingKind(const StepRecord &a, const StepRecord &b, std::size_t i, double tolerance)
{
    for (const HealthKind kind : kCompareOrder) {
        const HealthKindInfo &k = healthKindInfo(kind);
        if (!sameHealth(a.layers[i].*k.member, b.layers[i].*k.member, tolerance))
            return &k;
    }
    return nullptr;
}

bool isAncestor(const std::vector<Layer> &layers, int ancestor, int layer)
{
    for (int p = layers[std::size_t(layer)].parent; p >= 0; p = layers[std::size_t(p)].parent)
        if (p == ancestor)
            return true;
    return false;
}

}  // namespace

StepComparison compareSteps(const StepRecord &recorded, const StepRecord &replayed, const std::vector<Layer> &layers,
                            double tolerance)
{
    StepComparison c;
    const std::size_t n = std::min({recorded.layers.size(), replayed.layers.size(), layers.size()});
    auto matches = [&](double tol) {
        if (!sameHealth(recorded.inputHealth, replayed.inputHealth, tol) ||
            !sameHealth(recorded.lossHealth, replayed.lossHealth, tol))
            return false;
        for (std::size_t i = 0; i < n; ++i)
            if (differingKind(recorded, replayed, i, tol))
                return false;
        return recorded.layers.size() == replayed.layers.size();
    };
    if (matches(0.0)) {
        c.verdict = ReplayVerdict::Reproduced;
        return c;
    }
    if (recorded.failed() == replayed.failed() && matches(tolerance))
        c.verdict = ReplayVerdict::ReproducedNumerically;

    // Where it differs (even bit for bit only): weights first, then the deepest layer in order.
    std::vector<int> differing;
    const double where = c.verdict == ReplayVerdict::NotReproduced ? tolerance : 0.0;
    for (std::size_t i = 0; i < n; ++i)
        if (differingKind(recorded, replayed, i, where))
            differing.push_back(int(i));
    int chosen = -1;
    for (int i : differing)
        if (!sameHealth(recorded.layers[std::size_t(i)].params, replayed.layers[std::size_t(i)].params, where)) {
            chosen = i;
            break;
        }
    for (std::size_t k = 0; chosen < 0 && k < differing.size(); ++k) {
        bool hasDifferingDescendant = false;
        for (int j : differing)
            hasDifferingDescendant = hasDifferingDescendant || isAncestor(layers, differing[k], j);
        if (!hasDifferingDescendant)
            chosen = differing[k];
    }
    if (chosen >= 0) {
        const HealthKindInfo *k = differingKind(recorded, replayed, std::size_t(chosen), where);
        c.differsAt = chosen;
        c.differsWhat = std::string(k->id) + ": " + describeHealth(recorded.layers[std::size_t(chosen)].*k->member) +
                        " recorded, " + describeHealth(replayed.layers[std::size_t(chosen)].*k->member) + " now";
    } else if (!sameHealth(recorded.lossHealth, replayed.lossHealth, where)) {
        c.differsWhat =
            "loss: " + describeHealth(recorded.lossHealth) + " recorded, " + describeHealth(replayed.lossHealth) + " now";
    }
    return c;
}

}  // namespace nanscope
