#pragma once
// Computing TensorHealth from tensors. CPU tensors: one fused pass over the data. CUDA tensors:
// device-side reductions, read back once per step by HealthCollector.
#include "nanscope/health.h"

#include <ATen/core/Tensor.h>

#include <vector>

namespace nanscope {

// One fused pass on the host; device tensors are copied to the host first (tests, one-offs).
// `positiveSumSq`, when given: the sum of squares of the positive elements (-1 where the scan
// does not know it: integers), from which reluHealth() tells what a ReLU of `t` holds. Without
// it the scan of float32 data is faster (float_kernels.h).
TensorHealth computeHealth(const at::Tensor &t, double *positiveSumSq = nullptr);

// The health of relu(x) from the health of x and its positive sum of squares, without reading
// relu(x): the same numbers a scan of it gives (its finite L2 bit for bit on the fast path).
TensorHealth reluHealth(const TensorHealth &x, double positiveSumSq);

// The health of `numel` values: those `values` measured, the rest zeros (a max pool's input
// gradient, whose windows do not overlap, holds its output gradient's values among zeros).
TensorHealth amongZerosHealth(const TensorHealth &values, std::int64_t numel);

// Device-side raw statistics of one tensor, a float64 tensor of kRawStatsSize values: the counts
// of NaN, +Inf and -Inf, the sum of squares of the finite part, the finite minimum and the finite
// maximum negated (both +Inf when nothing is finite: every column but the sums reduces by min).
// HealthCollector reduces many tensors at once instead.
constexpr int kRawStatsSize = 6;
at::Tensor rawStatsOnDevice(const at::Tensor &t);
// The same for each row of a [rows, n] float or double tensor: [rows, kRawStatsSize].
at::Tensor rawStatsPerRow(const at::Tensor &rows);
// `paddingNans`: NaNs counted in the raw statistics that are not the tensor's own.
TensorHealth healthFromRawStats(std::int64_t numel, std::int64_t paddingNans, const double *raw);

// True when every element is finite; cheaper than full health (stops at the first bad value).
bool allFinite(const at::Tensor &t);

// Dataset indices (from `indices`) of the rows of `batch` that hold a non-finite value.
std::vector<std::int64_t> nonFiniteRows(const at::Tensor &batch, const std::vector<std::int64_t> &indices);

}  // namespace nanscope
