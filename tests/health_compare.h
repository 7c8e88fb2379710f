#pragma once
// Test helper: health measured two ways (the host scan and the device path) agrees: counts
// exactly, values to float rounding (the device path sums in another order).
#include "nanscope/health.h"
#include "nanscope/records.h"

#include <QString>

#include <algorithm>
#include <cmath>

namespace nanscope::testing {

inline bool closeOrBothNan(double a, double b)
{
    if (std::isnan(a) || std::isnan(b))
        return std::isnan(a) && std::isnan(b);
    return a == b || std::fabs(a - b) <= 1e-5 * std::max(std::fabs(a), std::fabs(b));
}

// Empty when they agree, else what differs.
inline QString healthDiff(const TensorHealth &host, const TensorHealth &device)
{
    if (host.present != device.present || host.numel != device.numel || host.nan != device.nan ||
        host.posInf != device.posInf || host.negInf != device.negInf)
        return QString("counts: host %1/%2/%3/%4 of %5, device %6/%7/%8/%9 of %10")
            .arg(host.present)
            .arg(host.nan)
            .arg(host.posInf)
            .arg(host.negInf)
            .arg(host.numel)
            .arg(device.present)
            .arg(device.nan)
            .arg(device.posInf)
            .arg(device.negInf)
            .arg(device.numel);
    if (!closeOrBothNan(host.min, device.min) || !closeOrBothNan(host.max, device.max) ||
        !closeOrBothNan(host.absMax, device.absMax) || !closeOrBothNan(host.finiteL2, device.finiteL2))
        return QString("values: host min %1 max %2 absmax %3 l2 %4, device %5 %6 %7 %8")
            .arg(host.min)
            .arg(host.max)
            .arg(host.absMax)
            .arg(host.finiteL2)
            .arg(device.min)
            .arg(device.max)
            .arg(device.absMax)
            .arg(device.finiteL2);
    return {};
}

// Empty when every part of a layer's map agrees (see healthDiff), else the first that differs.
inline QString layerHealthDiff(const LayerHealth &host, const LayerHealth &device)
{
    const struct {
        const char *name;
        const TensorHealth &a, &b;
    } parts[] = {{"forward", host.forward, device.forward},
                 {"grad", host.grad, device.grad},
                 {"params", host.params, device.params},
                 {"param grads", host.paramGrads, device.paramGrads}};
    for (const auto &p : parts) {
        const QString diff = healthDiff(p.a, p.b);
        if (!diff.isEmpty())
            return QString::fromLatin1(p.name) + ": " + diff;
    }
    if (host.inputFinite != device.inputFinite)
        return QStringLiteral("input finite: host %1, device %2").arg(host.inputFinite).arg(device.inputFinite);
    return {};
}

}  // namespace nanscope::testing
