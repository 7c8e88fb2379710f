#include "health/tensor_health.h"

#include "health/float_kernels.h"

#include <ATen/ATen.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <cmath>

namespace nanscope {

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

TensorHealth scanFloat(const float *p, std::int64_t n, double *positiveSumSq, PositiveSquares positive)
{
    const FloatScan f = scanFloats(p, n, positive);
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
    const PositiveSquares squares = positiveSumSq ? PositiveSquares::Summed : PositiveSquares::Skipped;
    if (!input.defined())
        return {};
    at::Tensor t = input.is_cpu() ? input : input.to(at::kCPU);
    if (!t.is_contiguous())
        t = t.contiguous();
    const std::int64_t n = t.numel();
    switch (t.scalar_type()) {
    case at::kFloat: return scanFloat(t.data_ptr<float>(), n, &positive, squares);
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

TensorHealth amongZerosHealth(const TensorHealth &values, std::int64_t numel)
{
    TensorHealth h = values;
    h.present = true;
    h.numel = numel;
    if (numel > values.numel) {  // zeros: finite, so the range reaches 0 (and is known)
        const bool finite = values.present && values.numel > values.nonFinite();
        h.min = finite ? std::fmin(values.min, 0.0) : 0.0;
        h.max = finite ? std::fmax(values.max, 0.0) : 0.0;
        h.absMax = std::fmax(std::fabs(h.min), std::fabs(h.max));
    }
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
