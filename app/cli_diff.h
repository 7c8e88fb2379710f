#pragma once
// `nanscope diff`: two runs compared (docs/diff.md).
#include <iosfwd>
#include <string>
#include <vector>

namespace nanscope::cli {

int diffCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

}  // namespace nanscope::cli
