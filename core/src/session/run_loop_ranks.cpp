// The step of one rank of a data-parallel job: every rank computes its own map before the gradient
// all-reduce, the ranks compare them in one small collective, and all of them take the same
// decision from the same numbers (docs/ranks.md).
#include "distributed/rank_sync.h"
#include "session/run_loop.h"
#include "training/trainer.h"

#include <algorithm>
#include <cmath>

namespace nanscope {

namespace {

void clearNonFinite(TensorHealth &h) { h.nan = h.posInf = h.negInf = 0; }

std::string who(int rank) { return "rank " + std::to_string(rank); }

}  // namespace

void RunLoop::joinRanks()
{
    const DataParallel &job = config_.parallel;
    raise({EventKind::Info, 0, -1,
           who(job.rank) + " of " + std::to_string(job.world) + ": joining the job at " + job.address + ":" +
               std::to_string(job.port)});
    ranks_ = std::make_unique<RankSync>(job);
    ranks_->startFrom(trainer_->model());  // every rank starts from rank 0's weights
}

bool RunLoop::stepAcrossRanks(const std::shared_ptr<StepRecord> &record)
{
    const DataParallel &job = config_.parallel;
    const RankFindings found = ranks_->compare(*record, trainer_->layers().size());
    const bool mine = found.rank == ranks_->rank();
    if (!found.badRanks.empty() &&
        (job.onBadRank == BadRankPolicy::Skip || int(found.badRanks.size()) == ranks_->world())) {
        // No trace on any rank: discardStep() puts back the buffers the forward pass moved.
        const std::string why =
            "non-finite before the all-reduce on " + found.text(trainer_->layers()) + ": step skipped on every rank";
        discardAndPublish(record, why);
        raise({EventKind::Recovery, record->step, mine ? found.layer : -1, why});
        return true;
    }

    StepRecord applied = *record;  // what every rank applies: the same numbers everywhere
    const double meanNorm = ranks_->averageGradients(trainer_->model(), found.badRanks);
    // One rank applies its own gradient, whose norm the map already measured: a 1-rank job is then
    // a plain run bit for bit (clipping scales by the same norm).
    applied.gradNorm = ranks_->world() == 1 ? record->gradNorm : meanNorm;
    double loss = 0;
    int counted = 0;
    for (int r = 0; r < ranks_->world(); ++r)
        if (std::find(found.badRanks.begin(), found.badRanks.end(), r) == found.badRanks.end()) {
            loss += found.losses[std::size_t(r)];
            ++counted;
        }
    applied.loss = loss / counted;
    applied.origin = {};
    for (LayerHealth &h : applied.layers) {  // the gradients applied are the good ranks' mean
        clearNonFinite(h.forward);
        clearNonFinite(h.grad);
        clearNonFinite(h.paramGrads);
    }
    int root = 0;
    while (std::find(found.badRanks.begin(), found.badRanks.end(), root) != found.badRanks.end())
        ++root;
    ranks_->shareBuffers(trainer_->model(), root);  // the running statistics of a finite rank

    std::vector<Event> events;
    std::string stopReason;
    trainer_->applyStep(applied, events, stopReason);
    record->skipped = applied.skipped;
    record->rolledBack = applied.rolledBack;
    record->zeroedGradients = applied.zeroedGradients;
    record->gradNormClipped = applied.gradNormClipped;
    record->overflowLayers = applied.overflowLayers;
    record->why = applied.why;
    for (std::size_t i = 0; i < record->layers.size() && i < applied.layers.size(); ++i)
        record->layers[i].updateRatio = applied.layers[i].updateRatio;
    if (!found.badRanks.empty()) {
        record->why = "non-finite before the all-reduce on " + found.text(trainer_->layers()) +
                      ": applied without its gradients, averaged over the other ranks";
        events.push_back({EventKind::Recovery, record->step, mine ? found.layer : -1, record->why});
    }
    publish(record);
    for (const Event &e : events)
        raise(e);
    if (job.checkEvery > 0 && (record->step + 1) % job.checkEvery == 0)
        compareRankParameters(record->step, false);
    if (stopReason.empty())
        return true;
    summary_.stoppedByPolicy = true;
    raise({EventKind::Error, record->step, -1, stopReason});
    return false;
}

void RunLoop::compareRankParameters(int step, bool final)
{
    const RankDivergence d = ranks_->compareParameters(trainer_->model());
    if (d.ranks.empty()) {
        if (final)
            raise({EventKind::Info, step, -1,
                   "parameters identical on all " + std::to_string(ranks_->world()) + " ranks"});
        return;
    }
    for (const auto &[rank, layer] : d.ranks) {
        const std::string path = layer >= 0 ? trainer_->layers()[std::size_t(layer)].path : std::string("?");
        raise({EventKind::Warning, step, rank == ranks_->rank() ? layer : -1,
               who(rank) + "'s parameters differ from the other ranks' from " + path +
                   " on: silent divergence, the signature of a hardware fault"});
    }
}

}  // namespace nanscope
