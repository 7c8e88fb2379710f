#include "training/control_changes.h"

#include "nanscope/precision.h"

#include <sstream>

namespace nanscope {

namespace {

std::string formatNumber(double v)
{
    std::ostringstream s;
    s << v;
    return s.str();
}

std::string recoveryName(const RecoveryPolicy &r)
{
    if (!r.any())
        return "off";
    std::string out;
    if (r.quarantineSamples)
        out += "quarantine";
    if (r.zeroNonFiniteGrads)
        out += std::string(out.empty() ? "" : "+") + "zero-grads";
    if (r.rollbackOnNonFiniteLoss)
        out += std::string(out.empty() ? "" : "+") + "rollback";
    return out;
}

std::string lossScalingName(const LossScaling &s)
{
    return s.enabled ? "from " + formatNumber(s.initialScale) : std::string("off");
}

// Each changed control with its old and new value; `text` gets the one line the event log shows.
}  // namespace

std::vector<ControlChange> diffControls(const Controls &a, const Controls &b, const std::string &device,
                                        std::string &text)
{
    std::vector<ControlChange> changes;
    std::vector<std::string> parts;
    const auto clipName = [](const std::optional<double> &c) { return c ? formatNumber(*c) : std::string("off"); };
    if (a.learningRate != b.learningRate) {
        changes.push_back({"lr", formatNumber(a.learningRate), formatNumber(b.learningRate)});
        parts.push_back("lr " + formatNumber(b.learningRate));
    }
    if (a.clipNorm != b.clipNorm) {
        changes.push_back({"clip", clipName(a.clipNorm), clipName(b.clipNorm)});
        parts.push_back("clip " + clipName(b.clipNorm));
    }
    if (a.recovery.quarantineSamples != b.recovery.quarantineSamples ||
        a.recovery.zeroNonFiniteGrads != b.recovery.zeroNonFiniteGrads ||
        a.recovery.rollbackOnNonFiniteLoss != b.recovery.rollbackOnNonFiniteLoss ||
        a.recovery.maxRetries != b.recovery.maxRetries) {
        changes.push_back({"recovery", recoveryName(a.recovery), recoveryName(b.recovery)});
        parts.push_back(b.recovery.any() ? "recovery on" : "recovery off");
    }
    if (a.pauseOnNonFinite != b.pauseOnNonFinite) {
        changes.push_back({"pause", a.pauseOnNonFinite ? "on" : "off", b.pauseOnNonFinite ? "on" : "off"});
        parts.push_back(b.pauseOnNonFinite ? "pause on non-finite" : "no pause");
    }
    if (a.precision != b.precision) {
        changes.push_back({"precision", precisionLabel(a.precision, device), precisionLabel(b.precision, device)});
        parts.push_back("precision " + precisionLabel(b.precision, device));
    }
    if (a.lossScaling != b.lossScaling) {
        changes.push_back({"loss-scaling", lossScalingName(a.lossScaling), lossScalingName(b.lossScaling)});
        parts.push_back(b.lossScaling.enabled ? "loss scaling from " + formatNumber(b.lossScaling.initialScale)
                                              : std::string("loss scaling off"));
    }
    if (a.fix != b.fix) {
        // The value is an eps where the scenario's fix has one; a plain switch holds 0.
        const auto fixName = [](const std::optional<double> &f) {
            return f ? (*f != 0.0 ? "on, " + formatNumber(*f) : std::string("on")) : std::string("off");
        };
        changes.push_back({"fix", fixName(a.fix), fixName(b.fix)});
        parts.push_back("fix " + fixName(b.fix));
    }
    text.clear();
    for (const std::string &p : parts)
        text += (text.empty() ? "" : ", ") + p;
    return changes;
}

}  // namespace nanscope
