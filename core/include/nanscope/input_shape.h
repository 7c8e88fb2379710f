#pragma once
// The one grammar of a synthetic input shape, shared by the command line and the window's dialog:
// positive sizes, the batch first, separated by 'x' ("8x3x64x64"); 'X', '×', commas and spaces
// are accepted too ("8, 3, 64, 64").
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nanscope {

// Empty when the text is not such a shape (no size, a size that is not a positive integer up to
// 2^31, more than 8 dimensions).
std::optional<std::vector<std::int64_t>> parseInputShape(const std::string &text);
// {8, 3, 64, 64} -> "8x3x64x64"
std::string formatInputShape(const std::vector<std::int64_t> &shape);

// A shape with the dtype of a synthetic input after a colon: "8x32:int64", "8x32:bool"; without
// one, float32. Empty when the shape is not valid or the dtype is not float32, int64 or bool.
struct ShapedInput {
    std::vector<std::int64_t> shape;
    std::string dtype = "float32";
};
std::optional<ShapedInput> parseShapedInput(const std::string &text);
std::string formatShapedInput(const ShapedInput &input);  // the dtype only when not float32

}  // namespace nanscope
