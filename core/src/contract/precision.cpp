// Precision names and labels, loss-scaling options and the fp16 headroom: plain arithmetic.
#include "nanscope/precision.h"

#include "contract/translatable.h"

#include <cmath>

namespace nanscope {

const char *precisionName(Precision p)
{
    switch (p) {
    case Precision::FP32: return "fp32";
    case Precision::FP16: return "fp16";
    case Precision::BF16: return "bf16";
    }
    return "fp32";
}

std::optional<Precision> parsePrecision(const std::string &name)
{
    for (const Precision p : {Precision::FP32, Precision::FP16, Precision::BF16})
        if (name == precisionName(p))
            return p;
    return std::nullopt;
}

std::string precisionLabel(Precision p, const std::string &device)
{
    if (p == Precision::FP16 && device == "cpu")
        return QT_TRANSLATE_NOOP("nanscope::core", "fp16 (emulated on CPU)");
    return precisionName(p);
}

bool usesLossScaling(const Controls &c) { return c.precision == Precision::FP16 && c.lossScaling.enabled; }

double largestFinite(Precision p)
{
    switch (p) {
    case Precision::FP16: return kFp16Max;
    case Precision::BF16: return 3.3895313892515355e38;
    case Precision::FP32: break;
    }
    return 3.4028234663852886e38;
}

double smallestPositive(Precision p)
{
    switch (p) {
    case Precision::FP16: return 0x1p-24;
    case Precision::BF16: return 0x1p-133;
    case Precision::FP32: break;
    }
    return 0x1p-149;
}

double fp16Headroom(const TensorHealth &h)
{
    if (!h.present || h.numel == 0)
        return std::nan("");
    if (h.posInf + h.negInf > 0)
        return INFINITY;
    if (std::isnan(h.absMax))  // only NaN in it: no finite value to measure
        return std::nan("");
    return fp16Headroom(h.absMax);
}

std::string LossScaling::invalidReason() const
{
    if (!(initialScale > 0) || !std::isfinite(initialScale))
        return "the initial loss scale must be a positive finite number";
    if (!(growthFactor > 1) || !std::isfinite(growthFactor))
        return "the loss-scale growth factor must be greater than 1";
    if (!(backoffFactor > 0 && backoffFactor < 1))
        return "the loss-scale backoff factor must lie between 0 and 1";
    if (growthInterval < 1)
        return "the loss-scale growth interval must be at least 1 step";
    return {};
}

}  // namespace nanscope
