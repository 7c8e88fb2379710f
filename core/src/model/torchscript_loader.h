#pragma once
// Opening a user's TorchScript file: one plain message naming the file and the cause for every
// way it can fail, and a scan of the loaded weights (a corrupted archive can load silently with
// garbage in it: there is no checksum).
#include "nanscope/non_finite_state.h"

#include <torch/csrc/jit/api/module.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace nanscope {

// Thrown by loadTorchScript(); what() is one line, without a LibTorch stack.
class ModelFileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Loads `path` onto `device` ("cpu", "cuda"). Throws ModelFileError.
torch::jit::Module loadTorchScript(const std::string &path, const std::string &device = "cpu");

// Every parameter and buffer holding a NaN or an Inf.
std::vector<NonFiniteState> scanNonFiniteState(const torch::jit::Module &module);

// The first line of a LibTorch error, without "Exception raised from ..." and the C++ stack.
std::string firstLine(const std::string &message);

}  // namespace nanscope
