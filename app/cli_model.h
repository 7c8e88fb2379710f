#pragma once
// The command line for a user's TorchScript file: `inspect`, and the --model flags that `run`
// and `bench` share.
#include "nanscope/session.h"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace nanscope::cli {

// "8x3x64x64" -> {8, 3, 64, 64}; throws std::invalid_argument.
std::vector<std::int64_t> parseShape(const std::string &text);

// Consumes one of --model, --input-shape, --inputs, --targets, --loss, --save (taking its value
// from `value()`); false when `flag` is none of them.
bool parseModelFlag(const std::string &flag, const std::function<const std::string &()> &value, RunConfig &config);

// `nanscope inspect FILE.pt --input-shape ... [--inputs X.pt] [--targets Y.pt] [--loss mse] [--json]`
int inspectCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

// `nanscope bench --model FILE.pt --input-shape ... [--rounds N] [--json]`
int benchModelCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

}  // namespace nanscope::cli
