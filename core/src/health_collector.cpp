#include "health_collector.h"

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

namespace nanscope {

void HealthCollector::record(TensorHealth *slot, const at::Tensor &t)
{
    if (!t.defined())
        return;
    if (t.is_cpu()) {
        slot->merge(computeHealth(t));
        return;
    }
    // The forward pass may run under autocast: the statistics are NaNScope's, not the model's.
    c10::impl::ExcludeDispatchKeyGuard noAutocast(c10::autocast_dispatch_keyset);
    pending_.push_back({slot, healthStatsOnDevice(t)});
}

void HealthCollector::recordMerged(TensorHealth *slot, const std::vector<at::Tensor> &tensors)
{
    for (const at::Tensor &t : tensors)
        record(slot, t);
}

void HealthCollector::resolve()
{
    if (pending_.empty())
        return;
    std::vector<at::Tensor> stats;
    stats.reserve(pending_.size());
    for (const Pending &p : pending_)
        stats.push_back(p.stats);
    const at::Tensor host = at::stack(stats).to(at::kCPU).contiguous();  // the one read a step
    const double *values = host.data_ptr<double>();
    for (std::size_t i = 0; i < pending_.size(); ++i)
        pending_[i].slot->merge(healthFromStats(values + i * kStatsSize));
    pending_.clear();
}

void HealthCollector::clear() { pending_.clear(); }

}  // namespace nanscope
