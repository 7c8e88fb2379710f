#include "health/tensor_health.h"

#include <ATen/ATen.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace nanscope {

void TensorHealth::merge(const TensorHealth &o)
{
    if (!o.present)
        return;
    const bool hadFinite = present && numel > nonFinite();
    const bool otherFinite = o.numel > o.nonFinite();
    numel += o.numel;
    nan += o.nan;
    posInf += o.posInf;
    negInf += o.negInf;
    if (otherFinite) {
        min = hadFinite ? std::fmin(min, o.min) : o.min;
        max = hadFinite ? std::fmax(max, o.max) : o.max;
        absMax = hadFinite ? std::fmax(absMax, o.absMax) : o.absMax;
    }
    finiteL2 = std::sqrt(finiteL2 * finiteL2 + o.finiteL2 * o.finiteL2);
    present = true;
}

namespace {

inline double toDouble(double v) { return v; }
inline double toDouble(float v) { return v; }
inline double toDouble(c10::Half v) { return static_cast<float>(v); }
inline double toDouble(c10::BFloat16 v) { return static_cast<float>(v); }

// One pass classifies each element with isfinite/isnan; comparing values (x != x) would break
// under fast-math and reads badly.
template <typename T> TensorHealth scan(const T *data, std::int64_t n, double *positiveSumSq)
{
    TensorHealth h;
    h.present = true;
    h.numel = n;
    double lo = INFINITY, hi = -INFINITY, sumSq = 0.0, positive = 0.0;
    std::int64_t nan = 0, pinf = 0, ninf = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const double v = toDouble(data[i]);
        if (std::isfinite(v)) {
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
            sumSq += v * v;
            positive += v > 0 ? v * v : 0.0;
        } else if (std::isnan(v)) {
            ++nan;
        } else if (v > 0) {
            ++pinf;
        } else {
            ++ninf;
        }
    }
    h.nan = nan;
    h.posInf = pinf;
    h.negInf = ninf;
    if (n > nan + pinf + ninf) {
        h.min = lo;
        h.max = hi;
        h.absMax = std::fmax(std::fabs(lo), std::fabs(hi));
    }
    h.finiteL2 = std::sqrt(sumSq);
    *positiveSumSq = positive;
    return h;
}

// The common case, float32, gets a branch-free kernel that does not classify elements at all: a
// NaN or an Inf anywhere makes the sum of squares, the minimum or the maximum non-finite, and only
// then does the tensor pay a second, exact pass that splits NaN, +Inf and -Inf. Four vector ops
// per vector of floats, in two independent accumulator sets so that the adds' latency does not
// bound the loop. (A finite value past ~1.8e19 overflows its float square and also takes the
// exact, double-precision pass.)
constexpr std::uint32_t kExponentMask = 0x7f800000u;

struct FloatScan {
    double sumSq = 0;
    double positiveSumSq = 0;  // of the positive elements only: what a ReLU of this tensor keeps
    float lo = INFINITY, hi = -INFINITY;
    bool needsExactPass = false;
};

// target_clones makes an ifunc whose resolver runs while the dynamic linker relocates, before
// ThreadSanitizer's runtime is up; TSan instruments the resolver too, so a TSan build crashed before
// main(). It gets the portable code path instead.
#if defined(__SANITIZE_THREAD__)
#define NANSCOPE_SIMD_CLONES(...)
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NANSCOPE_SIMD_CLONES(...)
#endif
#endif
#ifndef NANSCOPE_SIMD_CLONES
#define NANSCOPE_SIMD_CLONES(...) __attribute__((target_clones(__VA_ARGS__)))
#endif

// GCC/Clang vector extensions: 16 lanes, one AVX-512 register, two AVX2 or four SSE ones.
typedef float v16f __attribute__((vector_size(64)));

// always_inline: compiled once per target of the clones below, not once generically.
__attribute__((always_inline)) inline FloatScan scanFloatBody(const float *p, std::int64_t n)
{
    constexpr int lanes = 16;
    const v16f inf = v16f{} + INFINITY, zero = {};
    v16f lo0 = inf, lo1 = inf, hi0 = -inf, hi1 = -inf;  // a NaN compares false: it never lands here
    FloatScan r;
    std::int64_t i = 0;
    constexpr std::int64_t block = 4096;  // squares summed in float lanes, flushed to double
    while (i + 2 * lanes <= n) {
        v16f sq0 = {}, sq1 = {}, pos0 = {}, pos1 = {};
        const std::int64_t end = (i + block < n ? i + block : n) - (2 * lanes - 1);
        for (; i < end; i += 2 * lanes) {
            v16f a, b;
            std::memcpy(&a, p + i, sizeof a);
            std::memcpy(&b, p + i + lanes, sizeof b);
            lo0 = a < lo0 ? a : lo0;
            hi0 = a > hi0 ? a : hi0;
            sq0 += a * a;
            lo1 = b < lo1 ? b : lo1;
            hi1 = b > hi1 ? b : hi1;
            sq1 += b * b;
            // The squares ReLU(x) would add, in the same lanes and order: bit for bit its sum.
            const v16f pa = a > zero ? a : zero, pb = b > zero ? b : zero;
            pos0 += pa * pa;
            pos1 += pb * pb;
        }
        const v16f sq = sq0 + sq1, pos = pos0 + pos1;
        for (int k = 0; k < lanes; ++k) {
            r.sumSq += double(sq[k]);
            r.positiveSumSq += double(pos[k]);
        }
    }
    const v16f lo = lo0 < lo1 ? lo0 : lo1, hi = hi0 > hi1 ? hi0 : hi1;
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
    // Also true for n == 0 (lo stays +Inf): the exact pass handles the empty tensor.
    r.needsExactPass = !std::isfinite(r.sumSq) || !std::isfinite(r.lo) || !std::isfinite(r.hi);
    return r;
}

// AVX-512 scans an in-cache tensor about 1.5-1.8x faster than AVX2 (measured on the 2 MB output
// of the benchmark CNN's first convolution); bandwidth-bound ones alike.
NANSCOPE_SIMD_CLONES("avx512f", "avx2", "default") FloatScan scanFloatFast(const float *p, std::int64_t n)
{
    return scanFloatBody(p, n);
}

// Any element whose exponent bits are all set (NaN or Inf), read as unsigned integers of the
// float's width: 32 bits for float, 16 for fp16 and bf16. V is a vector of those integers; the
// op-level tier runs this on every op output, and under fp16 emulation on every cast's output.
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

typedef std::uint32_t v8u32 __attribute__((vector_size(32)));
typedef std::uint16_t v16u16 __attribute__((vector_size(32)));

NANSCOPE_SIMD_CLONES("avx2", "default") bool anyNonFiniteFloat(const std::uint32_t *bits, std::int64_t n)
{
    return anyExponentAllOnes<v8u32>(bits, n, std::uint32_t(kExponentMask));
}

NANSCOPE_SIMD_CLONES("avx2", "default")
bool anyNonFinite16(const std::uint16_t *bits, std::int64_t n, std::uint16_t mask)
{
    return anyExponentAllOnes<v16u16>(bits, n, mask);
}

TensorHealth scanFloat(const float *p, std::int64_t n, double *positiveSumSq)
{
    const FloatScan f = scanFloatFast(p, n);
    if (f.needsExactPass)
        return scan(p, n, positiveSumSq);  // rare: an unhealthy (or empty, or huge) tensor gets the exact pass
    TensorHealth h;
    h.present = true;
    h.numel = n;
    h.min = f.lo;
    h.max = f.hi;
    h.absMax = std::fmax(std::fabs(double(f.lo)), std::fabs(double(f.hi)));
    h.finiteL2 = std::sqrt(f.sumSq);
    *positiveSumSq = f.positiveSumSq;
    return h;
}

TensorHealth integerHealth(const at::Tensor &t)
{
    // Integers are always finite; their range still helps (labels out of range, say).
    TensorHealth h;
    h.present = true;
    h.numel = t.numel();
    if (h.numel > 0) {
        const at::Tensor d = t.to(at::kDouble);
        h.min = d.min().item<double>();
        h.max = d.max().item<double>();
        h.absMax = d.abs().max().item<double>();
        h.finiteL2 = d.norm().item<double>();
    }
    return h;
}

}  // namespace

TensorHealth computeHealth(const at::Tensor &input, double *positiveSumSq)
{
    double unused = 0;
    double &positive = positiveSumSq ? *positiveSumSq : unused;
    positive = -1;  // unknown until a scan says otherwise
    if (!input.defined())
        return {};
    at::Tensor t = input.is_cpu() ? input : input.to(at::kCPU);
    if (!t.is_contiguous())
        t = t.contiguous();
    const std::int64_t n = t.numel();
    switch (t.scalar_type()) {
    case at::kFloat: return scanFloat(t.data_ptr<float>(), n, &positive);
    case at::kDouble: return scan(t.data_ptr<double>(), n, &positive);
    case at::kHalf: return scan(t.data_ptr<c10::Half>(), n, &positive);
    case at::kBFloat16: return scan(t.data_ptr<c10::BFloat16>(), n, &positive);
    default: return integerHealth(t);
    }
}

TensorHealth reluHealth(const TensorHealth &in, double positiveSumSq)
{
    // relu(NaN) is NaN, relu(+Inf) is +Inf; -Inf and every non-positive value become 0.
    TensorHealth h;
    h.present = in.present;
    h.numel = in.numel;
    h.nan = in.nan;
    h.posInf = in.posInf;
    const bool inFinite = in.numel > in.nonFinite();
    if (inFinite || in.negInf > 0) {
        h.max = inFinite ? std::max(in.max, 0.0) : 0.0;
        h.min = inFinite && in.negInf == 0 && in.min > 0 ? in.min : 0.0;
        h.absMax = h.max;
    }
    h.finiteL2 = std::sqrt(positiveSumSq);
    return h;
}

at::Tensor rawStatsPerRow(const at::Tensor &x)
{
    // Non-finite values are replaced so that they cannot win the min or the max; a minimum still
    // at +Inf afterwards means the row held no finite value at all.
    const double inf = INFINITY;
    const at::Tensor counts = at::stack({at::isnan(x).sum(1), x.eq(inf).sum(1), x.eq(-inf).sum(1)}, 1).to(at::kDouble);
    const at::Tensor sumSq =
        at::linalg_vector_norm(at::nan_to_num(x, 0.0, 0.0, 0.0), 2, at::IntArrayRef{1}, false, at::kDouble).pow(2);
    const at::Tensor mins =
        at::stack({at::nan_to_num(x, inf, inf, inf).amin(1), at::nan_to_num(x, -inf, -inf, -inf).neg_().amin(1)}, 1);
    return at::cat({counts, sumSq.unsqueeze(1), mins.to(at::kDouble)}, 1);
}

at::Tensor rawStatsOnDevice(const at::Tensor &input)
{
    at::Tensor t = input.detach().reshape({1, -1});
    if (t.scalar_type() != at::kDouble)
        t = t.to(at::kFloat);  // double keeps its range; half types are reduced in float
    if (t.numel() == 0) {      // nothing to reduce (amin() of an empty row throws)
        const at::TensorOptions doubles = t.options().dtype(at::kDouble);
        return at::cat({at::zeros({4}, doubles), at::full({2}, INFINITY, doubles)});
    }
    return rawStatsPerRow(t).reshape({kRawStatsSize});
}

TensorHealth healthFromRawStats(std::int64_t numel, std::int64_t paddingNans, const double *raw)
{
    TensorHealth h;
    h.present = true;
    h.numel = numel;
    h.nan = static_cast<std::int64_t>(raw[0]) - paddingNans;
    h.posInf = static_cast<std::int64_t>(raw[1]);
    h.negInf = static_cast<std::int64_t>(raw[2]);
    h.finiteL2 = std::sqrt(raw[3]);
    if (std::isfinite(raw[4])) {  // else no element was finite: min, max and absMax stay NaN
        h.min = raw[4];
        h.max = -raw[5];
        h.absMax = std::max(std::fabs(h.min), std::fabs(h.max));
    }
    return h;
}

bool allFinite(const at::Tensor &t)
{
    if (!t.defined() || t.numel() == 0 || !at::isFloatingType(t.scalar_type()))
        return true;
    if (t.is_cpu() && t.scalar_type() == at::kFloat && t.is_contiguous())
        return !anyNonFiniteFloat(static_cast<const std::uint32_t *>(t.data_ptr()), t.numel());
    if (t.is_cpu() && t.is_contiguous() && (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16))
        return !anyNonFinite16(static_cast<const std::uint16_t *>(t.data_ptr()), t.numel(),
                               t.scalar_type() == at::kHalf ? 0x7c00 : 0x7f80);
    if (t.is_cpu())
        return computeHealth(t).nonFinite() == 0;
    return at::isfinite(t).all().item<bool>();
}

std::vector<std::int64_t> nonFiniteRows(const at::Tensor &batch, const std::vector<std::int64_t> &indices)
{
    std::vector<std::int64_t> bad;
    if (!at::isFloatingType(batch.scalar_type()) || batch.numel() == 0)
        return bad;
    const at::Tensor rowsOk = at::isfinite(batch.reshape({batch.size(0), -1})).all(1).to(at::kCPU);
    const auto ok = rowsOk.accessor<bool, 1>();
    for (std::int64_t r = 0; r < ok.size(0); ++r)
        if (!ok[r])
            bad.push_back(r < static_cast<std::int64_t>(indices.size()) ? indices[r] : r);
    return bad;
}

}  // namespace nanscope
