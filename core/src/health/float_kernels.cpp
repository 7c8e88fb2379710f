#include "health/float_kernels.h"

#include <cstring>
#include <stdexcept>

// Which code runs. On x86-64 with AVX2 and FMA the kernels work on 256-bit vectors, even where the CPU
// has AVX-512: a 512-bit multiply lowers the core's clock for a while afterwards, and the
// scalar matrix products of the same training step then ran 6-9% slower (measured with Debian's
// reference BLAS on an AVX-512 Xeon VM, where `bench`'s map ratio on the `deep` model fell from
// 1.07-1.09x to 1.05x with this change); the scan itself is as fast at 256 bits.
// Without AVX2 (or off x86), portable code on 16-float vectors, which the compiler splits into
// four SSE registers each: more independent adds in flight than 8-float ones.
//
// The choice is made by hand, not with target_clones: its resolver runs while the dynamic linker
// relocates, before ThreadSanitizer's runtime is up, and crashed a TSan build before main().
#if defined(__x86_64__) || defined(__i386__)
#define NANSCOPE_X86 1
#define NANSCOPE_TARGET_AVX2 __attribute__((target("avx2,fma")))
#else
#define NANSCOPE_TARGET_AVX2  // compiled as portable code, never chosen: cpuHasAvx2() is false
#endif

namespace nanscope {

namespace {

// GCC/Clang vector extensions.
typedef float v8f __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));
typedef std::uint32_t v8u32 __attribute__((vector_size(32)));
typedef std::uint16_t v16u16 __attribute__((vector_size(32)));

constexpr std::uint32_t kFloatExponentMask = 0x7f800000u;

// Three vector ops per vector of floats (five with the positive squares; a multiply-add counts
// as one where the target has FMA), in two independent accumulator sets so that the adds' latency
// does not bound the loop. A scan of data still in the cache is bound by these ops: the positive
// squares, which only a ReLU's health needs, make it a third slower. always_inline: compiled once
// for each caller's target.
template <typename V, bool kPositive>
__attribute__((always_inline)) inline FloatScan scanBody(const float *p, std::int64_t n)
{
    constexpr int lanes = sizeof(V) / sizeof(float);
    const V inf = V{} + INFINITY, zero = {};
    V lo0 = inf, lo1 = inf, hi0 = -inf, hi1 = -inf;  // a NaN compares false: it never lands here
    FloatScan r;
    std::int64_t i = 0;
    constexpr std::int64_t block = 4096;  // squares summed in float lanes, flushed to double
    while (i + 2 * lanes <= n) {
        V sq0 = {}, sq1 = {}, pos0 = {}, pos1 = {};
        const std::int64_t end = (i + block < n ? i + block : n) - (2 * lanes - 1);
        for (; i < end; i += 2 * lanes) {
            V a, b;
            std::memcpy(&a, p + i, sizeof a);
            std::memcpy(&b, p + i + lanes, sizeof b);
            lo0 = a < lo0 ? a : lo0;
            hi0 = a > hi0 ? a : hi0;
            sq0 += a * a;
            lo1 = b < lo1 ? b : lo1;
            hi1 = b > hi1 ? b : hi1;
            sq1 += b * b;
            if constexpr (kPositive) {
                // The squares ReLU(x) would add, in the same lanes and order: bit for bit its sum.
                const V pa = a > zero ? a : zero, pb = b > zero ? b : zero;
                pos0 += pa * pa;
                pos1 += pb * pb;
            }
        }
        const V sq = sq0 + sq1, pos = pos0 + pos1;
        for (int k = 0; k < lanes; ++k) {
            r.sumSq += double(sq[k]);
            r.positiveSumSq += double(pos[k]);
        }
    }
    const V lo = lo0 < lo1 ? lo0 : lo1, hi = hi0 > hi1 ? hi0 : hi1;
    for (int k = 0; k < lanes; ++k) {
        r.lo = lo[k] < r.lo ? lo[k] : r.lo;
        r.hi = hi[k] > r.hi ? hi[k] : r.hi;
    }
    for (; i < n; ++i) {
        const float v = p[i];
        r.lo = v < r.lo ? v : r.lo;
        r.hi = v > r.hi ? v : r.hi;
        r.sumSq += double(v) * double(v);
        r.positiveSumSq += v > 0 ? double(v) * double(v) : 0.0;
    }
    if constexpr (!kPositive)
        r.positiveSumSq = -1;
    // Also true for n == 0 (lo stays +Inf): the exact pass handles the empty tensor.
    r.needsExactPass = !std::isfinite(r.sumSq) || !std::isfinite(r.lo) || !std::isfinite(r.hi);
    return r;
}

// V is a vector of the unsigned integers of the values' width; the op-level tier runs this on every
// op output, and under fp16 emulation on every cast's output.
template <typename V, typename U>
__attribute__((always_inline)) inline bool anyExponentAllOnes(const U *p, std::int64_t n, U exponentMask)
{
    constexpr std::int64_t lanes = sizeof(V) / sizeof(U);
    const V mask = V{} + exponentMask;
    constexpr std::int64_t chunk = 1024;  // early exit at chunk granularity
    std::int64_t i = 0;
    while (i + lanes <= n) {
        decltype(mask == mask) any = {};  // NOLINT(misc-redundant-expression): the type of a lane mask
        const std::int64_t end = (i + chunk < n ? i + chunk : n) - (lanes - 1);
        for (; i < end; i += lanes) {
            V bits;
            std::memcpy(&bits, p + i, sizeof bits);
            any |= (bits & mask) == mask;
        }
        for (std::int64_t k = 0; k < lanes; ++k)
            if (any[k])
                return true;
    }
    for (; i < n; ++i) {
        U bits;
        std::memcpy(&bits, p + i, sizeof bits);  // the storage holds floats: read its bytes
        if ((bits & exponentMask) == exponentMask)
            return true;
    }
    return false;
}

NANSCOPE_TARGET_AVX2 FloatScan scanAvx2(const float *p, std::int64_t n, bool positive)
{
    return positive ? scanBody<v8f, true>(p, n) : scanBody<v8f, false>(p, n);
}

FloatScan scanPortable(const float *p, std::int64_t n, bool positive)
{
    return positive ? scanBody<v16f, true>(p, n) : scanBody<v16f, false>(p, n);
}

NANSCOPE_TARGET_AVX2 bool anyNonFiniteFloatAvx2(const std::uint32_t *bits, std::int64_t n)
{
    return anyExponentAllOnes<v8u32>(bits, n, kFloatExponentMask);
}

NANSCOPE_TARGET_AVX2 bool anyNonFinite16Avx2(const std::uint16_t *bits, std::int64_t n, std::uint16_t mask)
{
    return anyExponentAllOnes<v16u16>(bits, n, mask);
}

bool cpuHasAvx2()
{
#ifdef NANSCOPE_X86
    static const bool has = [] {
        __builtin_cpu_init();  // may run before the constructor that would do it
        return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0;
    }();
    return has;
#else
    return false;
#endif
}

bool useAvx2(KernelPath path)
{
    if (path == KernelPath::Avx2 && !cpuHasAvx2())
        throw std::invalid_argument("the AVX2 kernels do not run on this CPU (they need AVX2 and FMA)");
    return path == KernelPath::Avx2 || (path == KernelPath::Best && cpuHasAvx2());
}

}  // namespace

bool kernelPathRuns(KernelPath path) { return path != KernelPath::Avx2 || cpuHasAvx2(); }

FloatScan scanFloats(const float *p, std::int64_t n, PositiveSquares positive, KernelPath path)
{
    const bool withPositive = positive == PositiveSquares::Summed;
    return useAvx2(path) ? scanAvx2(p, n, withPositive) : scanPortable(p, n, withPositive);
}

bool anyNonFiniteFloat(const std::uint32_t *bits, std::int64_t n, KernelPath path)
{
    if (useAvx2(path))
        return anyNonFiniteFloatAvx2(bits, n);
    return anyExponentAllOnes<v8u32>(bits, n, kFloatExponentMask);
}

bool anyNonFinite16(const std::uint16_t *bits, std::int64_t n, std::uint16_t exponentMask, KernelPath path)
{
    if (useAvx2(path))
        return anyNonFinite16Avx2(bits, n, exponentMask);
    return anyExponentAllOnes<v16u16>(bits, n, exponentMask);
}

}  // namespace nanscope
