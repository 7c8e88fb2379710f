#include "cli_json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace nanscope::cli {

Json jsonNumber(double v)
{
    if (std::isnan(v))
        return "NaN";
    if (std::isinf(v))
        return v > 0 ? "Infinity" : "-Infinity";
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", v);
    return std::strtod(text, nullptr);
}

Json textOrNull(const std::string &text) { return text.empty() ? Json() : Json(text); }

Json originJson(const Origin &o)
{
    return Json{{"step", o.step},
                {"phase", phaseName(o.phase)},
                {"layer", o.layerPath},
                {"op", textOrNull(o.op)},
                {"source", textOrNull(o.source)},
                {"produced", o.produced},
                {"chain", textOrNull(o.chain)},
                {"explanation", o.explanation}};
}

std::string jsonLine(const Json &j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

}  // namespace nanscope::cli
