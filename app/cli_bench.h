#pragma once
// `nanscope bench`: the built-in models, or a user's TorchScript file with --model.
#include <iosfwd>
#include <string>
#include <vector>

namespace nanscope::cli {

// `nanscope bench [--rounds N] [--only mlp|cnn|deep] [--json]`
// `nanscope bench --model FILE.pt --input-shape ... [--rounds N] [--json]`
int benchCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

}  // namespace nanscope::cli
