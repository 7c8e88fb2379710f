#include "nanscope/health_compare.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace nanscope {

namespace {

bool samePattern(const TensorHealth &a, const TensorHealth &b)
{
    return a.present == b.present && a.numel == b.numel && a.nan == b.nan && a.posInf == b.posInf &&
           a.negInf == b.negInf;
}

std::string pair(const char *what, double a, double b)
{
    std::ostringstream o;
    o.precision(9);  // enough to tell two floats apart
    o << what << ' ' << a << " against " << b;
    return o.str();
}

}  // namespace

bool sameValue(double a, double b, double tolerance)
{
    if ((std::isnan(a) && std::isnan(b)) || a == b)
        return true;
    if (!std::isfinite(a) || !std::isfinite(b))
        return false;
    return std::fabs(a - b) <= tolerance * std::max(std::fabs(a), std::fabs(b));
}

bool sameHealth(const TensorHealth &a, const TensorHealth &b, double tolerance)
{
    if (!samePattern(a, b))
        return false;
    if (!a.present)
        return true;
    return sameValue(a.min, b.min, tolerance) && sameValue(a.max, b.max, tolerance) &&
           sameValue(a.finiteL2, b.finiteL2, tolerance);
}

std::string describeHealth(const TensorHealth &h)
{
    std::ostringstream o;
    if (!h.present)
        return "nothing";
    if (h.hasNonFinite())
        o << h.nan << " NaN, " << (h.posInf + h.negInf) << " Inf, ";
    o << "max |x| " << h.absMax;
    return o.str();
}

std::string healthDifference(const TensorHealth &a, const TensorHealth &b, double tolerance)
{
    if (a.present != b.present)
        return std::string("measured in ") + (a.present ? "the first run only" : "the second run only");
    if (a.numel != b.numel)
        return pair("elements", double(a.numel), double(b.numel));
    if (a.nan != b.nan)
        return pair("NaN", double(a.nan), double(b.nan));
    if (a.posInf != b.posInf)
        return pair("+Inf", double(a.posInf), double(b.posInf));
    if (a.negInf != b.negInf)
        return pair("-Inf", double(a.negInf), double(b.negInf));
    if (!a.present)
        return {};
    if (!sameValue(a.min, b.min, tolerance))
        return pair("min", a.min, b.min);
    if (!sameValue(a.max, b.max, tolerance))
        return pair("max", a.max, b.max);
    if (!sameValue(a.finiteL2, b.finiteL2, tolerance))
        return pair("norm", a.finiteL2, b.finiteL2);
    return {};
}

}  // namespace nanscope
