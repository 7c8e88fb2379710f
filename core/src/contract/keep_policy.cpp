#include "nanscope/keep_policy.h"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace nanscope {

namespace {

constexpr std::array<std::pair<LayerDetail, const char *>, 8> kDetailIds{{
    {LayerDetail::First, "first"},
    {LayerDetail::NonFinite, "nonfinite"},
    {LayerDetail::Warning, "warning"},
    {LayerDetail::LeadUp, "lead-up"},
    {LayerDetail::Control, "control"},
    {LayerDetail::Capsule, "capsule"},
    {LayerDetail::Sample, "sample"},
    {LayerDetail::None, "none"},
}};

std::string lower(std::string s)
{
    for (char &c : s)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

const char *layerDetailId(LayerDetail detail)
{
    for (const auto &[d, id] : kDetailIds)
        if (d == detail)
            return id;
    return "";
}

LayerDetail layerDetailFromId(const std::string &id)
{
    for (const auto &[d, name] : kDetailIds)
        if (id == name)
            return d;
    return LayerDetail::Every;
}

KeepPolicy KeepPolicy::all()
{
    KeepPolicy p;
    p.keepAll = true;
    return p;
}

std::optional<KeepPolicy> parseKeepPolicy(const std::string &text)
{
    const std::string t = lower(text);
    if (t == "all")
        return KeepPolicy::all();
    if (t == "auto")
        return KeepPolicy{};
    char *end = nullptr;
    const double number = std::strtod(t.c_str(), &end);
    if (end == t.c_str() || !std::isfinite(number) || number <= 0)
        return std::nullopt;
    const std::string unit(end);
    double factor = 0;
    if (unit.empty() || unit == "b")
        factor = 1;
    else if (unit == "k" || unit == "kb" || unit == "kib")
        factor = 1024.0;
    else if (unit == "m" || unit == "mb" || unit == "mib")
        factor = 1024.0 * 1024.0;
    else if (unit == "g" || unit == "gb" || unit == "gib")
        factor = 1024.0 * 1024.0 * 1024.0;
    else if (unit == "t" || unit == "tb" || unit == "tib")
        factor = 1024.0 * 1024.0 * 1024.0 * 1024.0;
    else
        return std::nullopt;
    const double bytes = number * factor;
    if (bytes < double(KeepPolicy::kSmallestBudgetBytes) || bytes > 9.0e18)
        return std::nullopt;
    KeepPolicy p;
    p.budgetBytes = std::int64_t(bytes);
    return p;
}

std::string keepPolicyName(const KeepPolicy &policy)
{
    if (policy.keepAll)
        return "all";
    if (policy.isDefault())
        return "auto";
    // The largest unit that gives a short number; %g keeps 1.5 as 1.5 and 2 as 2.
    const double bytes = double(policy.budgetBytes);
    for (const auto &[factor, unit] : {std::pair<double, const char *>{1024.0 * 1024.0 * 1024.0 * 1024.0, "TiB"},
                                       {1024.0 * 1024.0 * 1024.0, "GiB"},
                                       {1024.0 * 1024.0, "MiB"},
                                       {1024.0, "KiB"}}) {
        const double value = bytes / factor;
        if (value >= 1 && std::round(value * 1000) == value * 1000) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%g%s", value, unit);
            return buf;
        }
    }
    return std::to_string(policy.budgetBytes);
}

}  // namespace nanscope
