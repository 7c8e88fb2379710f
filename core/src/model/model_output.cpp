#include "model/model_output.h"

#include <optional>
#include <stdexcept>

namespace nanscope {

namespace {

std::string shapeOf(const at::Tensor &t)
{
    std::string s;
    for (std::int64_t i = 0; i < t.dim(); ++i)
        s += (i ? "x" : "") + std::to_string(t.size(i));
    return s.empty() ? std::string("scalar") : s;
}

std::string describeInner(const c10::IValue &v)
{
    if (v.isTensor())
        return shapeOf(v.toTensor());
    std::string s;
    auto each = [&s](const auto &items, auto &&text) {
        bool first = true;
        for (const auto &item : items) {
            s += (first ? "" : ", ") + text(item);
            first = false;
        }
    };
    if (v.isTuple()) {
        s = "(";
        each(v.toTupleRef().elements(), [](const c10::IValue &e) { return describeInner(e); });
        return s + ")";
    }
    if (v.isList()) {
        s = "[";
        each(v.toListRef(), [](const c10::IValue &e) { return describeInner(e); });
        return s + "]";
    }
    if (v.isGenericDict()) {
        s = "{";
        each(v.toGenericDict(), [](const auto &entry) {
            const c10::IValue &k = entry.key();
            return (k.isString() ? k.toStringRef() : std::string(k.tagKind())) + ": " + describeInner(entry.value());
        });
        return s + "}";
    }
    return v.isNone() ? std::string("None") : std::string(v.tagKind());
}

std::optional<at::Tensor> firstTensor(const c10::IValue &v)
{
    if (v.isTensor())
        return v.toTensor();
    if (v.isTuple())
        for (const c10::IValue &e : v.toTupleRef().elements())
            if (auto t = firstTensor(e))
                return t;
    if (v.isList())
        for (const c10::IValue &e : v.toListRef())
            if (auto t = firstTensor(e))
                return t;
    if (v.isGenericDict())
        for (const auto &entry : v.toGenericDict())
            if (auto t = firstTensor(entry.value()))
                return t;
    return std::nullopt;
}

bool isIndex(const std::string &s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

}  // namespace

std::string describeOutput(const c10::IValue &output)
{
    if (output.isTensor())
        return "a tensor " + shapeOf(output.toTensor());
    const char *kind = output.isTuple()         ? "a tuple "
                       : output.isList()        ? "a list "
                       : output.isGenericDict() ? "a dict "
                                                : "";
    return kind + describeInner(output);
}

at::Tensor selectOutput(const c10::IValue &output, const std::string &selector)
{
    std::optional<c10::IValue> picked;
    if (selector.empty()) {
        picked = output;
    } else if (isIndex(selector) && (output.isTuple() || output.isList())) {
        const std::size_t i = std::stoul(selector);
        const std::size_t n = output.isTuple() ? output.toTupleRef().elements().size() : output.toListRef().size();
        if (i < n)
            picked = output.isTuple() ? output.toTupleRef().elements()[i] : output.toListRef()[i];
    } else if (output.isGenericDict()) {
        for (const auto &entry : output.toGenericDict())
            if (entry.key().isString() && entry.key().toStringRef() == selector)
                picked = entry.value();
    }
    if (!picked)
        throw std::invalid_argument("the model returns " + describeOutput(output) + ": --output '" + selector +
                                    "' names none of its " +
                                    (output.isGenericDict() ? "keys" : "positions (0, 1, ...)"));
    if (const auto t = firstTensor(*picked))
        return *t;
    throw std::invalid_argument("the model returns " + describeOutput(output) +
                                (selector.empty() ? std::string(", which holds no tensor")
                                                  : ": its output '" + selector + "' holds no tensor"));
}

}  // namespace nanscope
