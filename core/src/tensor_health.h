#pragma once
// Computing TensorHealth from tensors. CPU tensors: one fused pass over the data. CUDA tensors:
// device-side reductions into a small stats tensor, read back once per step by HealthCollector.
#include "nanscope/health.h"

#include <ATen/core/Tensor.h>

#include <vector>

namespace nanscope {

// One fused pass on the host; device tensors are copied to the host first (tests, one-offs).
TensorHealth computeHealth(const at::Tensor &t);

// Device-side: a float64 tensor of kStatsSize values, see healthFromStats().
constexpr int kStatsSize = 8;
at::Tensor healthStatsOnDevice(const at::Tensor &t);
TensorHealth healthFromStats(const double *stats);

// True when every element is finite; cheaper than full health (stops at the first bad value).
bool allFinite(const at::Tensor &t);

// Dataset indices (from `indices`) of the rows of `batch` that hold a non-finite value.
std::vector<std::int64_t> nonFiniteRows(const at::Tensor &batch, const std::vector<std::int64_t> &indices);

}  // namespace nanscope
