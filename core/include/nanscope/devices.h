#pragma once
// The devices a run can use, as LibTorch sees them, with a reason for each one it cannot use.
#include <string>
#include <vector>

namespace nanscope {

struct DeviceInfo {
    std::string id;           // "cpu", "cuda"
    std::string description;  // "CPU", "CUDA (2 devices)"
    bool available = false;
    std::string reason;  // why not, when unavailable
};

std::vector<DeviceInfo> devices();

}  // namespace nanscope
