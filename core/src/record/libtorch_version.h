#pragma once
// The LibTorch NaNScope was built with, as run files and capsules record it: "1.13.1". A header
// only (the version macros), so the run-file code needs no LibTorch library.
#include <torch/csrc/api/include/torch/version.h>

#include <string>

namespace nanscope {

inline std::string libtorchVersion()
{
    return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
           std::to_string(TORCH_VERSION_PATCH);
}

}  // namespace nanscope
