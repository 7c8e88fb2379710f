#pragma once
// Gathers the health of many tensors during one step. On the CPU each tensor is scanned at once.
// On a device each tensor is copied into a staging buffer (one kernel), and the statistics of all
// of them come from a few reductions over that buffer, read back in one copy by resolve(): a step
// costs a handful of kernels per flush and one host synchronisation however many tensors it
// observes. Copying at once also keeps what was observed safe from later in-place ops.
#include "health/float_kernels.h"
#include "health/tensor_health.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace nanscope {

class HealthCollector {
public:
    // What one record() measured: it can be added to more slots without a second scan (a
    // module's output that is also its container's output).
    struct Measured {
        TensorHealth host;
        double positiveSumSq = -1;  // on the host: see computeHealth(); -1 where unknown
        int segment = -1;           // on a device: its place among the step's statistics
        bool valid = false;
    };
    // `slot` must stay valid until resolve(). The positive squares, when summed, are known at once
    // for a host tensor (Measured::positiveSumSq).
    Measured record(TensorHealth *slot, const at::Tensor &t, PositiveSquares positive = PositiveSquares::Skipped);
    void recordAgain(TensorHealth *slot, const Measured &m);
    // Adds several tensors (a layer's parameters) into one slot.
    void recordMerged(TensorHealth *slot, const std::vector<at::Tensor> &tensors);
    void resolve();
    void clear();
    // CPU tensors take the device path too: statistics as tensors, read back in resolve(). The
    // code a CUDA run takes, checkable where there is no GPU.
    void setDevicePathOnCpu(bool on) { devicePathOnCpu_ = on; }
    // The elements scanned on the host so far, a running total: what the map read, against what
    // it reported (much of which follows from scans already made).
    std::int64_t hostElementsScanned() const { return hostElementsScanned_; }

    // Staged values are laid out in rows of this many; a tensor starts on a new row.
    static constexpr std::int64_t kRowWidth = 1024;

private:
    int stage(const at::Tensor &t);
    // Reduces what is staged into one part of statistics and empties the staging buffer.
    void reduceStaged();
    const at::Tensor &rowsPerSegment();  // [segments] on the staging device
    void reserveStaging(std::int64_t rows, const at::Device &device);

    struct Pending {
        TensorHealth *slot;
        int segment;
    };
    std::vector<Pending> pending_;
    // Per segment (one observed tensor on a device): its element count and the NaNs of the
    // padding of its last row, which the reductions count with its own.
    std::vector<std::int64_t> numels_;
    std::vector<std::int64_t> paddingNans_;
    // Raw statistics ([n, kRawStatsSize], double) of consecutive segments, in segment order.
    std::vector<at::Tensor> parts_;

    at::Tensor staging_;  // float, NaN wherever nothing is staged
    std::int64_t stagedRows_ = 0;
    std::int64_t rowsThisStep_ = 0;
    std::vector<std::int64_t> stagedRowCounts_;  // per staged segment
    // The rows of each segment for recent layouts, kept on the device: steps repeat their
    // layout, so after the first step nothing travels to the device.
    std::vector<std::pair<std::vector<std::int64_t>, at::Tensor>> layoutCache_;
    bool devicePathOnCpu_ = false;
    std::int64_t hostElementsScanned_ = 0;
};

}  // namespace nanscope
