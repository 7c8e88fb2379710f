#pragma once
// `nanscope steer`: a request to a Python loop that records into a run file (docs/command-line.md).
#include <iosfwd>
#include <string>
#include <vector>

namespace nanscope::cli {

int steerCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

}  // namespace nanscope::cli
