#pragma once
// The command line's JSON: one object per line, its keys in the order they were written.
#include "nanscope/records.h"
#include "nanscope/run_json.h"

#include <string>

namespace nanscope::cli {

using Json = nlohmann::ordered_json;

// A measured value as numberJson writes it, finite values kept to 9 significant digits, as the
// command line has always written them: enough to give back every float a tensor holds, without a
// double's noise in the last digits.
Json jsonNumber(double v);

// null for an empty text (an op or a source line nobody could name), else the text.
Json textOrNull(const std::string &text);

// One compact line, without its newline. Text that is not UTF-8 (a file name) is replaced by
// U+FFFD rather than thrown on: the line still gets out.
std::string jsonLine(const Json &j);

}  // namespace nanscope::cli
