#pragma once
// Gathers the health of many tensors during one step. On the CPU each tensor is scanned at once;
// on a device the per-tensor reductions stay there, stacked and read back in one copy by
// resolve(), so a step costs one host synchronisation however many layers it observes.
#include "tensor_health.h"

#include <vector>

namespace nanscope {

class HealthCollector {
public:
    // `slot` must stay valid until resolve().
    void record(TensorHealth *slot, const at::Tensor &t);
    // Adds several tensors (a layer's parameters) into one slot.
    void recordMerged(TensorHealth *slot, const std::vector<at::Tensor> &tensors);
    void resolve();
    void clear();

private:
    struct Pending {
        TensorHealth *slot;
        at::Tensor stats;
    };
    std::vector<Pending> pending_;
};

}  // namespace nanscope
