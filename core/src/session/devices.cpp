#include "nanscope/devices.h"

#include <torch/cuda.h>

namespace nanscope {

std::vector<DeviceInfo> devices()
{
    std::vector<DeviceInfo> out;
    out.push_back({"cpu", "CPU", true, {}});
    DeviceInfo cuda{"cuda", "CUDA", false, {}};
    if (torch::cuda::is_available()) {
        const auto n = torch::cuda::device_count();
        cuda.available = true;
        cuda.description = "CUDA (" + std::to_string(n) + (n == 1 ? " device)" : " devices)");
    } else {
        cuda.reason =
            "LibTorch sees no CUDA device (this LibTorch may be a CPU-only build, or no GPU or driver is present)";
    }
    out.push_back(cuda);
    return out;
}

}  // namespace nanscope
