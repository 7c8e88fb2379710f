#pragma once
// Process-wide tuning of the C allocator that LibTorch's CPU tensors come from. Call once, early in
// main(), before any training.
namespace nanscope {

// A training step frees and allocates the same multi-megabyte activation and gradient buffers on
// every step. glibc's defaults hand such blocks back to the kernel (heap trimming above a dynamic
// threshold, mmap for large blocks) and the next step page-faults them in again: about 1,200 page
// faults a step on the benchmark CNN, a third of its step time. This keeps up to 128 MiB of freed
// memory in the process and serves blocks under 32 MiB from the heap. A no-op outside glibc.
void keepFreedTensorMemory();

}  // namespace nanscope
