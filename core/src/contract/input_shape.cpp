#include "nanscope/input_shape.h"

#include <cctype>

namespace nanscope {

namespace {

constexpr std::size_t kMaxDims = 8;
constexpr std::int64_t kMaxSize = std::int64_t(1) << 31;

bool isBlank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool isDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::optional<std::vector<std::int64_t>> parseInputShape(const std::string &input)
{
    std::string text;  // '×' (UTF-8 C3 97) read as 'x'
    for (std::size_t i = 0; i < input.size(); ++i) {
        if (input.compare(i, 2, "\xC3\x97") == 0) {
            text += 'x';
            ++i;
        } else {
            text += input[i];
        }
    }
    std::size_t i = 0, end = text.size();
    while (i < end && isBlank(text[i]))
        ++i;
    while (end > i && isBlank(text[end - 1]))
        --end;
    std::vector<std::int64_t> shape;
    while (i < end) {
        std::int64_t size = 0;
        const std::size_t digits = i;
        for (; i < end && isDigit(text[i]); ++i)
            if ((size = size * 10 + (text[i] - '0')) > kMaxSize)
                return std::nullopt;
        if (i == digits || size <= 0 || shape.size() == kMaxDims)
            return std::nullopt;
        shape.push_back(size);
        // One separator between sizes: 'x', 'X' or ',' with optional blanks around it, or blanks.
        const std::size_t separator = i;
        while (i < end && isBlank(text[i]))
            ++i;
        if (i < end && (text[i] == 'x' || text[i] == 'X' || text[i] == ','))
            ++i;
        while (i < end && isBlank(text[i]))
            ++i;
        if (i < end ? i == separator : separator != end)
            return std::nullopt;  // something else than a separator, or a trailing separator
    }
    if (shape.empty())
        return std::nullopt;
    return shape;
}

std::string formatInputShape(const std::vector<std::int64_t> &shape)
{
    std::string text;
    for (std::int64_t n : shape)
        text += (text.empty() ? "" : "x") + std::to_string(n);
    return text;
}

std::optional<ShapedInput> parseShapedInput(const std::string &text)
{
    const auto colon = text.find(':');
    ShapedInput in;
    if (colon != std::string::npos) {
        std::size_t a = colon + 1, b = text.size();
        while (a < b && isBlank(text[a]))
            ++a;
        while (b > a && isBlank(text[b - 1]))
            --b;
        in.dtype = text.substr(a, b - a);
        if (in.dtype != "float32" && in.dtype != "int64" && in.dtype != "bool")
            return std::nullopt;
    }
    const auto shape = parseInputShape(text.substr(0, colon));
    if (!shape)
        return std::nullopt;
    in.shape = *shape;
    return in;
}

std::string formatShapedInput(const ShapedInput &input)
{
    return formatInputShape(input.shape) + (input.dtype == "float32" ? std::string() : ":" + input.dtype);
}

}  // namespace nanscope
