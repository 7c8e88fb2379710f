// The step of one rank of a data-parallel job: every rank computes its own map before the gradient
// all-reduce, the ranks compare them in one small collective, and all of them take the same
// decision from the same numbers (docs/ranks.md).
#include "distributed/rank_step.h"
#include "session/run_loop.h"
#include "training/trainer.h"

namespace nanscope {

void RunLoop::joinRanks()
{
    const DataParallel &job = config_.parallel;
    raise(Event(EventKind::Info, 0, -1,
                EventMessage{"rank-joining",
                             {std::to_string(job.rank), std::to_string(job.world), job.address,
                              std::to_string(job.port)}}));
    ranks_ = std::make_unique<RankSync>(job, config_.device);
    ranks_->startFrom(trainer_->model());  // every rank starts from rank 0's weights
    raise(Event(EventKind::Info, 0, -1,
                EventMessage{"rank-collectives", {std::to_string(job.rank), ranks_->backendName()}}));
}

bool RunLoop::applyAcrossRanks(std::shared_ptr<StepRecord> record)
{
    std::vector<Event> events;
    std::string stopReason;
    nanscope::stepAcrossRanks(*trainer_, *ranks_, *record, config_.parallel.onBadRank, events, stopReason);
    const StepRecordPtr published = publish(std::move(record));
    for (const Event &e : events)
        raise(e);
    const int every = config_.parallel.checkEvery;
    if (every > 0 && (published->step + 1) % every == 0)
        compareRankParameters(published->step, false);
    if (stopReason.empty())
        return true;
    summary_.stoppedByPolicy = true;
    raise({EventKind::Error, published->step, -1, stopReason});
    return false;
}

void RunLoop::compareRankParameters(int step, bool final)
{
    const RankDivergence d = ranks_->compareParameters(trainer_->model());
    if (d.ranks.empty()) {
        if (final)
            raise(Event(EventKind::Info, step, -1,
                        EventMessage{"ranks-identical", {std::to_string(ranks_->world())}}));
        return;
    }
    for (const auto &[rank, layer] : d.ranks) {
        const std::string path = layer >= 0 ? trainer_->layers()[std::size_t(layer)].path : std::string("?");
        raise(Event(EventKind::Warning, step, rank == ranks_->rank() ? layer : -1,
                    EventMessage{"rank-diverged", {std::to_string(rank), path}}));
    }
}

}  // namespace nanscope
