#include "replay/step_compare.h"

#include "nanscope/health_kinds.h"

#include <cmath>
#include <sstream>

namespace nanscope {

namespace {

bool sameBits(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

bool close(double a, double b, double tolerance)
{
    if (sameBits(a, b))
        return true;
    if (!std::isfinite(a) || !std::isfinite(b))
        return false;
    return std::fabs(a - b) <= tolerance * std::max(std::fabs(a), std::fabs(b));
}

bool samePattern(const TensorHealth &a, const TensorHealth &b)
{
    return a.present == b.present && a.numel == b.numel && a.nan == b.nan && a.posInf == b.posInf &&
           a.negInf == b.negInf;
}

// `tolerance` 0: bit for bit.
bool sameHealth(const TensorHealth &a, const TensorHealth &b, double tolerance)
{
    if (!samePattern(a, b))
        return false;
    if (!a.present)
        return true;
    return close(a.min, b.min, tolerance) && close(a.max, b.max, tolerance) && close(a.finiteL2, b.finiteL2, tolerance);
}

// Parameters first: weights that differ before the step explain every difference after them.
constexpr HealthKind kCompareOrder[] = {HealthKind::Params, HealthKind::Forward, HealthKind::Grad,
                                        HealthKind::ParamGrads};

std::string describe(const TensorHealth &h)
{
    std::ostringstream o;
    if (!h.present)
        return "nothing";
    if (h.hasNonFinite())
        o << h.nan << " NaN, " << (h.posInf + h.negInf) << " Inf, ";
    o << "max |x| " << h.absMax;
    return o.str();
}

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
        c.differsWhat = std::string(k->id) + ": " + describe(recorded.layers[std::size_t(chosen)].*k->member) +
                        " recorded, " + describe(replayed.layers[std::size_t(chosen)].*k->member) + " now";
    } else if (!sameHealth(recorded.lossHealth, replayed.lossHealth, where)) {
        c.differsWhat =
            "loss: " + describe(recorded.lossHealth) + " recorded, " + describe(replayed.lossHealth) + " now";
    }
    return c;
}

}  // namespace nanscope
