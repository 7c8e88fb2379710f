#pragma once
// The command line for a user's TorchScript file: `inspect`, and the model options that `run`
// and `bench` share.
#include "nanscope/run_config.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace nanscope::cli {

class Arguments;

// --model, --input-shape, --inputs, --targets and --loss, read into `config`.
void addModelOptions(Arguments &args, RunConfig &config);

// Empty when a model run has its input (a shape or a file), else a one-line message naming the
// flags and, where the model tells, the shape to try. The core's own message names no flag.
std::string missingModelInput(const RunConfig &config);

// `nanscope inspect FILE.pt --input-shape ... [--inputs X.pt] [--targets Y.pt] [--loss mse] [--json]`
int inspectCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

}  // namespace nanscope::cli
