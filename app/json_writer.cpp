#include "json_writer.h"

#include <cmath>
#include <cstdio>

namespace nanscope {

std::string JsonObject::quote(const std::string &s)
{
    std::string out = "\"";
    for (const char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

std::string JsonObject::number(double v)
{
    if (std::isnan(v))
        return "\"NaN\"";
    if (std::isinf(v))
        return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

JsonObject &JsonObject::add(const std::string &key, double v) { return addRaw(key, number(v)); }

JsonObject &JsonObject::add(const std::string &key, const std::vector<std::int64_t> &v)
{
    std::string a = "[";
    for (std::size_t i = 0; i < v.size(); ++i)
        a += (i ? "," : "") + std::to_string(v[i]);
    return addRaw(key, a + "]");
}

JsonObject &JsonObject::add(const std::string &key, const std::vector<std::string> &v)
{
    std::string a = "[";
    for (std::size_t i = 0; i < v.size(); ++i)
        a += (i ? "," : "") + quote(v[i]);
    return addRaw(key, a + "]");
}

JsonObject &JsonObject::addRaw(const std::string &key, const std::string &json)
{
    if (!body_.empty())
        body_ += ',';
    body_ += quote(key) + ':' + json;
    return *this;
}

}  // namespace nanscope
