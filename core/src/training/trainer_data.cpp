// The trainer's data side: the batches it draws (or a replay feeds it), those it holds since its
// newest snapshot for a capsule, its snapshots, and the fault it injects. The step itself lives in
// trainer.cpp.
#include "training/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace nanscope {

Trainer::Batch Trainer::nextBatch()
{
    if (fedBatches_.empty())
        return drawBatch();
    Batch b = std::move(fedBatches_.front());
    fedBatches_.erase(fedBatches_.begin());
    return b;
}

void Trainer::keepBatch(const Batch &b)
{
    // Held by reference (no copy) for a capsule's replay from the snapshot; a window that grew
    // past this (no finite state for long) is no longer complete and is dropped from the front.
    constexpr std::size_t kMaxHeld = 64;
    if (heldFrom_ < 0)
        heldFrom_ = b.step;
    if (recentBatches_.size() >= kMaxHeld)
        recentBatches_.erase(recentBatches_.begin());
    recentBatches_.push_back(b);
}

void Trainer::pushSnapshot(const std::vector<at::Tensor> &buffers)
{
    Snapshot s = takeSnapshot(step_, *model_, buffers, *optimizer_);
    s.learningRate = lr_;
    s.lossScale = lossScale();
    s.growthTracker = scaler_.growthTracker();
    snapshots_.push(std::move(s));
    lastSnapshotStep_ = step_;
    heldFrom_ = step_;
    recentBatches_.erase(
        std::remove_if(recentBatches_.begin(), recentBatches_.end(), [this](const Batch &b) { return b.step < step_; }),
        recentBatches_.end());
}

namespace {

// A rank's share of an epoch, as PyTorch's DistributedSampler deals it: every rank shuffles the same
// way, the order is padded from its start to a multiple of the world, and rank r takes positions
// r, r + world, ...: disjoint shards of one size.
std::vector<std::int64_t> shardOf(const std::vector<std::int64_t> &order, int rank, int world)
{
    const std::size_t w = std::size_t(world);
    const std::size_t total = (order.size() + w - 1) / w * w;
    std::vector<std::int64_t> shard;
    for (std::size_t i = std::size_t(rank); i < total; i += w)
        shard.push_back(order[i % order.size()]);
    return shard;
}

}  // namespace

Trainer::Batch Trainer::drawBatch()
{
    const auto n = std::size_t(data_.x.size(0));
    Batch b;
    while (b.indices.size() < std::size_t(batchSize_)) {
        if (cursor_ >= order_.size()) {
            if (!order_.empty() && b.indices.size() > 0)
                break;  // the last, shorter batch of the epoch
            order_.resize(n);
            std::iota(order_.begin(), order_.end(), 0);
            std::shuffle(order_.begin(), order_.end(), shuffler_);
            if (config_.parallel.active())
                order_ = shardOf(order_, config_.parallel.rank, config_.parallel.world);
            cursor_ = 0;
            ++epoch_;
            if (quarantined_.size() >= n)
                throw std::runtime_error("every sample of the data set has been quarantined");
        }
        const std::int64_t i = order_[cursor_++];
        if (controls_.recovery.quarantineSamples && quarantined_.count(i))
            continue;
        b.indices.push_back(i);
    }
    const at::Tensor idx = torch::tensor(b.indices, torch::kLong);
    b.x = data_.x.index_select(0, idx);
    b.y = data_.y.index_select(0, idx);
    for (const at::Tensor &side : data_.side)
        b.side.push_back(side.index_select(0, idx));
    const SampleInjection &bad = config_.nanSample;
    if (bad.active() && bad.step == step_ && (bad.rank < 0 || bad.rank == config_.parallel.rank)) {
        b.x = b.x.clone();  // the data set itself stays intact: the next epoch draws the sample clean
        b.x.view({-1}).narrow(0, 0, 1).fill_(std::numeric_limits<double>::quiet_NaN());
        b.injected = true;
    }
    return b;
}

void Trainer::keepFaultFlipped()
{
    // The same element, still the largest, the same bit: the value the step computed with.
    flipExponentBit(faultWeight(*model_, config_.fault.layer), config_.fault.layer + ".weight");
}

FlippedWeight Trainer::flipFaultWeight()
{
    if (!config_.fault.active() || config_.fault.step != step_ || !faultDone_.empty())
        return {};
    if (config_.fault.rank >= 0 && config_.fault.rank != config_.parallel.rank)
        return {};  // another rank's fault
    const std::string &layer = config_.fault.layer;
    FlippedWeight f = flipExponentBit(faultWeight(*model_, layer), layer + ".weight");
    faultDone_ = f.text;
    return f;
}

}  // namespace nanscope
