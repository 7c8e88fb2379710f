#include "cli_json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace nanscope::cli {

Json jsonNumber(double v)
{
    if (!std::isfinite(v))
        return numberJson(v);
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", v);
    return std::strtod(text, nullptr);
}

std::string jsonLine(const Json &j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

}  // namespace nanscope::cli
