#pragma once
// The command line's JSON: one object per line, its keys in the order they were written.
#include "nanscope/records.h"
#include "nanscope/run_json.h"

#include <string>

namespace nanscope::cli {

// Json, numberJson and textOrNull come from nanscope/run_json.h.

// A measured value as numberJson writes it, finite values kept to 9 significant digits, as the
// command line has always written them: enough to give back every float a tensor holds, without a
// double's noise in the last digits.
Json jsonNumber(double v);

// One compact line, without its newline. Text that is not UTF-8 (a file name) is replaced by
// U+FFFD rather than thrown on: the line still gets out.
std::string jsonLine(const Json &j);

}  // namespace nanscope::cli
