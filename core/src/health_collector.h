#pragma once
// Gathers the health of many tensors during one step. On the CPU each tensor is scanned at once;
// on a device the per-tensor reductions stay there, stacked and read back in one copy by
// resolve(), so a step costs one host synchronisation however many layers it observes.
#include "tensor_health.h"

#include <vector>

namespace nanscope {

class HealthCollector {
public:
    // What one record() measured: it can be added to more slots without a second scan (a
    // module's output that is also its container's output).
    struct Measured {
        TensorHealth host;
        at::Tensor stats;  // on a device
        bool valid = false;
    };
    // `slot` must stay valid until resolve().
    Measured record(TensorHealth *slot, const at::Tensor &t);
    void recordAgain(TensorHealth *slot, const Measured &m);
    // Adds several tensors (a layer's parameters) into one slot.
    void recordMerged(TensorHealth *slot, const std::vector<at::Tensor> &tensors);
    void resolve();
    void clear();
    // CPU tensors take the device path too: statistics as tensors, read back in resolve(). The
    // code a CUDA run takes, checkable where there is no GPU.
    void setDevicePathOnCpu(bool on) { devicePathOnCpu_ = on; }

private:
    struct Pending {
        TensorHealth *slot;
        at::Tensor stats;
    };
    std::vector<Pending> pending_;
    bool devicePathOnCpu_ = false;
};

}  // namespace nanscope
