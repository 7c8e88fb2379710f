#include "nanscope/layer_detail_retention.h"

#include <algorithm>

namespace nanscope {

bool holdsNonFinite(const StepRecord &r)
{
    if (r.origin.valid() || r.inputHealth.hasNonFinite() || r.lossHealth.hasNonFinite() || !r.overflowLayers.empty())
        return true;
    return std::any_of(r.layers.begin(), r.layers.end(), [](const LayerHealth &lh) {
        return lh.forward.hasNonFinite() || lh.grad.hasNonFinite() || lh.params.hasNonFinite() ||
               lh.paramGrads.hasNonFinite();
    });
}

LayerDetailRetention::LayerDetailRetention(KeepPolicy policy) : policy_(policy) {}

LayerDetail LayerDetailRetention::causeOf(const StepRecord &r) const
{
    if (policy_.keepAll)
        return LayerDetail::Every;
    if (holdsNonFinite(r))
        return LayerDetail::NonFinite;
    if (const auto it = keepAt_.find(r.step); it != keepAt_.end())
        return it->second;
    if (r.step >= controlFrom_ && r.step <= controlUntil_)
        return LayerDetail::Control;
    if (r.step < KeepPolicy::kFirstSteps)
        return LayerDetail::First;
    return LayerDetail::None;
}

std::vector<LayerDetailRetention::Decision> LayerDetailRetention::keepWaiting(int from, int to, LayerDetail detail)
{
    std::vector<Decision> kept;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
        const int s = it->record->step;
        if (s >= from && s <= to) {
            kept.push_back({it->record, detail, it->sampled});
            it = waiting_.erase(it);
        } else {
            ++it;
        }
    }
    return kept;
}

std::vector<LayerDetailRetention::Decision> LayerDetailRetention::step(const StepRecordPtr &record)
{
    const int s = record->step;
    while (!waiting_.empty() && waiting_.front().record->step < s - KeepPolicy::kLeadUpSteps)
        waiting_.pop_front();  // out of reach of any lead-up: it keeps what it has
    const LayerDetail cause = causeOf(*record);
    keepAt_.erase(keepAt_.begin(), keepAt_.upper_bound(s));  // asked for steps that came (or never will)
    std::vector<Decision> out;
    if (cause == LayerDetail::NonFinite || cause == LayerDetail::Warning)
        out = keepWaiting(s - KeepPolicy::kLeadUpSteps, s - 1, LayerDetail::LeadUp);
    if (cause != LayerDetail::None) {
        out.push_back({record, cause});
    } else {
        const bool sampled = s % sampleEvery_ == 0;
        waiting_.push_back({record, sampled});
        out.push_back({record, sampled ? LayerDetail::Sample : LayerDetail::None});
    }
    return out;
}

std::vector<LayerDetailRetention::Decision> LayerDetailRetention::event(EventKind kind, int step)
{
    if (policy_.keepAll)
        return {};
    switch (kind) {
    case EventKind::Warning:
    case EventKind::FirstNonFinite:
    case EventKind::Paused: {
        std::vector<Decision> out = keepWaiting(step - KeepPolicy::kLeadUpSteps, step - 1, LayerDetail::LeadUp);
        std::vector<Decision> self = keepStep(step, LayerDetail::Warning);
        out.insert(out.end(), self.begin(), self.end());
        return out;
    }
    case EventKind::ControlChange: {
        std::vector<Decision> out = keepWaiting(step - KeepPolicy::kLeadUpSteps, step - 1, LayerDetail::LeadUp);
        const int until = step + KeepPolicy::kAfterControlSteps - 1;
        std::vector<Decision> after = keepWaiting(step, until, LayerDetail::Control);
        out.insert(out.end(), after.begin(), after.end());
        if (until > controlUntil_) {
            controlFrom_ = controlUntil_ >= step - 1 ? controlFrom_ : step;
            controlUntil_ = until;
        }
        return out;
    }
    default:
        return {};
    }
}

std::vector<LayerDetailRetention::Decision> LayerDetailRetention::keepStep(int step, LayerDetail detail)
{
    if (policy_.keepAll)
        return {};
    std::vector<Decision> kept = keepWaiting(step, step, detail);
    if (kept.empty() && (waiting_.empty() || step > waiting_.back().record->step))
        keepAt_[step] = detail;  // not arrived yet (else it was decided already)
    return kept;
}

bool LayerDetailRetention::thin()
{
    if (sampleEvery_ >= kMaxSampleEvery)
        return false;
    sampleEvery_ *= 2;
    for (Waiting &w : waiting_)  // the writer drops their rows: a lead-up must write them again
        if (w.sampled && w.record->step % sampleEvery_ != 0)
            w.sampled = false;
    return true;
}

}  // namespace nanscope
