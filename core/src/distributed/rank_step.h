#pragma once
// One step of a data-parallel job after each rank computed its own map: the ranks compare their
// maps, then every rank skips the step or averages the finite ranks' gradients, takes a finite
// rank's buffers and applies the update. The run loop and `bench --ranks` both step this way.
#include "distributed/rank_sync.h"
#include "training/trainer.h"

#include <string>
#include <vector>

namespace nanscope {

// Decides and applies `record`'s step (computed by trainer.computeStep()) on this rank: `record`
// gets the decision (skipped, why, the update's measures), `events` what to tell, `stopReason` a
// recovery policy's stop. Returns what the ranks found.
RankFindings stepAcrossRanks(Trainer &trainer, RankSync &sync, StepRecord &record, BadRankPolicy policy,
                             std::vector<Event> &events, std::string &stopReason);

}  // namespace nanscope
