#include "health/health_collector.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace nanscope {

namespace {

constexpr std::int64_t kInitialStagingRows = 1024;  // 4 MiB of floats; grows to a step's need
// 256 MiB of floats: a step that observes more reduces in several flushes, and a single tensor
// that does not fit is reduced on its own.
constexpr std::int64_t kMaxStagingRows = (std::int64_t(1) << 26) / HealthCollector::kRowWidth;

bool stageable(const at::Tensor &t)
{
    const at::ScalarType s = t.scalar_type();
    return t.numel() > 0 && (s == at::kFloat || s == at::kHalf || s == at::kBFloat16) &&
           (t.numel() + HealthCollector::kRowWidth - 1) / HealthCollector::kRowWidth <= kMaxStagingRows;
}

}  // namespace

HealthCollector::Measured HealthCollector::record(TensorHealth *slot, const at::Tensor &t, PositiveSquares positive)
{
    Measured m;
    if (!t.defined())
        return m;
    m.valid = true;
    if (t.is_cpu() && !devicePathOnCpu_) {
        m.host = computeHealth(t, positive == PositiveSquares::Summed ? &m.positiveSumSq : nullptr);
        hostElementsScanned_ += t.numel();
        slot->merge(m.host);
        return m;
    }
    // The statistics are NaNScope's, not the model's: not under the model's autocast, not in its
    // autograd graph, and not seen by the op-level tracer (its ops would look like origins).
    c10::impl::ExcludeDispatchKeyGuard noAutocast(c10::autocast_dispatch_keyset);
    at::NoGradGuard noGrad;
    at::DisableRecordFunctionGuard noTracing;
    m.segment = stage(t);
    pending_.push_back({slot, m.segment});
    return m;
}

void HealthCollector::recordAgain(TensorHealth *slot, const Measured &m)
{
    if (!m.valid)
        return;
    if (m.segment >= 0)
        pending_.push_back({slot, m.segment});
    else
        slot->merge(m.host);
}

void HealthCollector::recordMerged(TensorHealth *slot, const std::vector<at::Tensor> &tensors)
{
    for (const at::Tensor &t : tensors)
        record(slot, t);
}

int HealthCollector::stage(const at::Tensor &t)
{
    const int segment = int(numels_.size());
    numels_.push_back(t.numel());
    if (!stageable(t)) {  // empty, double, integer or huge: reduced on its own
        reduceStaged();   // keeps the parts in segment order
        parts_.push_back(rawStatsOnDevice(t).reshape({1, kRawStatsSize}));
        paddingNans_.push_back(0);
        return segment;
    }
    const std::int64_t rows = (t.numel() + kRowWidth - 1) / kRowWidth;
    if (staging_.defined() && staging_.device() != t.device()) {
        reduceStaged();
        staging_ = at::Tensor();
    }
    if (!staging_.defined() || (stagedRows_ + rows) * kRowWidth > staging_.numel()) {
        reduceStaged();
        if (!staging_.defined() || rows * kRowWidth > staging_.numel())
            reserveStaging(rows, t.device());
    }
    staging_.narrow(0, stagedRows_ * kRowWidth, t.numel()).copy_(t.detach().reshape({-1}));
    paddingNans_.push_back(rows * kRowWidth - t.numel());
    stagedRowCounts_.push_back(rows);
    stagedRows_ += rows;
    rowsThisStep_ += rows;
    return segment;
}

void HealthCollector::reserveStaging(std::int64_t rows, const at::Device &device)
{
    const std::int64_t have = staging_.defined() ? staging_.numel() / kRowWidth : 0;
    const std::int64_t want = std::min(kMaxStagingRows, std::max({rows, have, kInitialStagingRows}));
    if (want <= have && staging_.defined() && staging_.device() == device)
        return;
    staging_ = at::Tensor();  // release the old buffer before taking the new one
    staging_ = at::full({want * kRowWidth}, NAN, at::TensorOptions().dtype(at::kFloat).device(device));
}

const at::Tensor &HealthCollector::rowsPerSegment()
{
    for (const auto &[layout, lengths] : layoutCache_)
        if (layout == stagedRowCounts_ && lengths.device() == staging_.device())
            return lengths;
    // from_blob borrows the vector: the copy (even to the CPU) makes the tensor own its data.
    at::Tensor lengths = at::from_blob(stagedRowCounts_.data(), {std::int64_t(stagedRowCounts_.size())}, at::kLong)
                             .to(staging_.device(), at::kLong, /*non_blocking=*/false, /*copy=*/true);
    if (layoutCache_.size() >= 8)
        layoutCache_.erase(layoutCache_.begin());
    layoutCache_.emplace_back(stagedRowCounts_, std::move(lengths));
    return layoutCache_.back().second;
}

void HealthCollector::reduceStaged()
{
    if (stagedRowCounts_.empty())
        return;
    // Per row first (the padding is NaN, which no statistic but the NaN count sees), then the
    // rows of each segment together. segment_reduce walks each segment in order, so the sums
    // come out the same on every run, where atomic adds (index_add_ on CUDA) would not; unsafe:
    // no check of the lengths against the data, which would read them back to the host.
    const at::Tensor x = staging_.narrow(0, 0, stagedRows_ * kRowWidth).view({stagedRows_, kRowWidth});
    const at::Tensor rows = rawStatsPerRow(x);
    const at::Tensor &lengths = rowsPerSegment();
    // The counts and the sum of squares add up; the minimum and the negated maximum take the min.
    parts_.push_back(at::cat({at::segment_reduce(rows.narrow(1, 0, 4), "sum", lengths, {}, {}, 0, /*unsafe=*/true),
                              at::segment_reduce(rows.narrow(1, 4, 2), "min", lengths, {}, {}, 0, /*unsafe=*/true)},
                             1));
    x.fill_(NAN);  // ordered after the reductions on the device's stream
    stagedRows_ = 0;
    stagedRowCounts_.clear();
}

void HealthCollector::resolve()
{
    if (pending_.empty()) {
        clear();
        return;
    }
    {
        c10::impl::ExcludeDispatchKeyGuard noAutocast(c10::autocast_dispatch_keyset);
        at::NoGradGuard noGrad;
        at::DisableRecordFunctionGuard noTracing;
        reduceStaged();
        const at::Tensor all = parts_.size() == 1 ? parts_.front() : at::cat(parts_, 0);
        const at::Tensor host = all.to(at::kCPU).contiguous();  // the one read a step
        if (host.size(0) != std::int64_t(numels_.size()))
            throw std::logic_error("HealthCollector: statistics and segments out of step");
        const double *raw = host.data_ptr<double>();
        for (const Pending &p : pending_)
            p.slot->merge(healthFromRawStats(numels_[std::size_t(p.segment)], paddingNans_[std::size_t(p.segment)],
                                             raw + std::size_t(p.segment) * kRawStatsSize));
        // A step that needed several flushes gets a staging buffer for all of it next time.
        if (staging_.defined() && rowsThisStep_ * kRowWidth > staging_.numel())
            reserveStaging(rowsThisStep_, staging_.device());
    }
    clear();
}

void HealthCollector::clear()
{
    if (stagedRows_ > 0)  // a step abandoned half way: its staged values must not leak into the next
        staging_.narrow(0, 0, stagedRows_ * kRowWidth).fill_(NAN);
    pending_.clear();
    numels_.clear();
    paddingNans_.clear();
    parts_.clear();
    stagedRows_ = 0;
    rowsThisStep_ = 0;
    stagedRowCounts_.clear();
}

}  // namespace nanscope
