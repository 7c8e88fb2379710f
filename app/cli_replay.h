#pragma once
// `nanscope replay FILE.nsrun [--step N] [--device cpu|cuda] [--threads N] [--json]`.
#include <iosfwd>
#include <string>
#include <vector>

namespace nanscope::cli {

int replayCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

}  // namespace nanscope::cli
