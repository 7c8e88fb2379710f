#pragma once
// A small JSON writer for the command line's one-object-per-line output. Non-finite numbers are
// written as the strings "NaN", "Infinity" and "-Infinity" (JSON has no literal for them).
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace nanscope {

class JsonObject {
public:
    JsonObject &add(const std::string &key, double v);
    JsonObject &add(const std::string &key, int v) { return addRaw(key, std::to_string(v)); }
    JsonObject &add(const std::string &key, std::int64_t v) { return addRaw(key, std::to_string(v)); }
    JsonObject &add(const std::string &key, bool v) { return addRaw(key, v ? "true" : "false"); }
    JsonObject &add(const std::string &key, const std::string &v) { return addRaw(key, quote(v)); }
    JsonObject &add(const std::string &key, const char *v) { return addRaw(key, quote(v)); }
    JsonObject &add(const std::string &key, const JsonObject &v) { return addRaw(key, v.str()); }
    JsonObject &add(const std::string &key, const std::vector<std::int64_t> &v);
    JsonObject &add(const std::string &key, const std::vector<std::string> &v);
    JsonObject &addNull(const std::string &key) { return addRaw(key, "null"); }
    JsonObject &addRaw(const std::string &key, const std::string &json);
    std::string str() const { return "{" + body_ + "}"; }

    static std::string quote(const std::string &s);
    static std::string number(double v);

private:
    std::string body_;
};

}  // namespace nanscope
