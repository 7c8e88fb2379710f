#include "health_collector.h"

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

namespace nanscope {

HealthCollector::Measured HealthCollector::record(TensorHealth *slot, const at::Tensor &t)
{
    Measured m;
    if (!t.defined())
        return m;
    m.valid = true;
    if (t.is_cpu() && !devicePathOnCpu_) {
        m.host = computeHealth(t);
        slot->merge(m.host);
        return m;
    }
    // The forward pass may run under autocast: the statistics are NaNScope's, not the model's.
    c10::impl::ExcludeDispatchKeyGuard noAutocast(c10::autocast_dispatch_keyset);
    m.stats = healthStatsOnDevice(t);
    pending_.push_back({slot, m.stats});
    return m;
}

void HealthCollector::recordAgain(TensorHealth *slot, const Measured &m)
{
    if (!m.valid)
        return;
    if (m.stats.defined())
        pending_.push_back({slot, m.stats});
    else
        slot->merge(m.host);
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
