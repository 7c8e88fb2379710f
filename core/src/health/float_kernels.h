#pragma once
// The host's vector kernels behind TensorHealth: a float32 tensor's health in one branch-free
// pass, and whether any float32, fp16 or bf16 value is NaN or Inf. Each runs the code that suits
// the CPU, chosen once (float_kernels.cpp says why not always the widest).
#include <cmath>
#include <cstdint>

namespace nanscope {

// What the branch-free pass over float32 values learns. It does not classify elements: a NaN or
// an Inf anywhere makes the sum of squares, the minimum or the maximum non-finite, and then
// `needsExactPass` says the values need the exact pass that splits NaN, +Inf and -Inf. (So does a
// finite value past ~1.8e19, whose float square overflows, and an empty tensor.)
struct FloatScan {
    double sumSq = 0;
    // Of the positive elements only: what a ReLU of these values keeps. -1 when not summed.
    double positiveSumSq = 0;
    float lo = INFINITY, hi = -INFINITY;
    bool needsExactPass = false;
};

// The code the kernels can run: portable vector code, or AVX2 (with FMA) on an x86 CPU that has
// both. Without a path, the kernels run the best one; tests name each path this CPU runs.
enum class KernelPath { Best, Portable, Avx2 };
bool kernelPathRuns(KernelPath path);

// Whether the scan also sums the squares of the positive elements: only a ReLU's health, derived
// from its input's scan, needs them, and they cost a scan of cached data a third of its time.
enum class PositiveSquares { Summed, Skipped };

FloatScan scanFloats(const float *p, std::int64_t n, PositiveSquares positive, KernelPath path = KernelPath::Best);

// True when any element's exponent bits are all set (NaN or Inf), the values read as the unsigned
// integers of their width; `exponentMask` is 0x7c00 for fp16, 0x7f80 for bf16.
bool anyNonFiniteFloat(const std::uint32_t *bits, std::int64_t n, KernelPath path = KernelPath::Best);
bool anyNonFinite16(const std::uint16_t *bits, std::int64_t n, std::uint16_t exponentMask,
                    KernelPath path = KernelPath::Best);

}  // namespace nanscope
