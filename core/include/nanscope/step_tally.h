#pragma once
// What a run's summary counts of its steps, defined once: a live run (RunLoop), a run file read
// back (SummaryBuilder) and a chunk of 64 steps (StepChunk) all tally with it, so a reopened run
// says what the live one said.
#include "nanscope/records.h"

#include <cstdint>
#include <vector>

namespace nanscope {

struct StepTally {
    int steps = 0;  // published records (a step re-run after a rollback counts each time)
    int nonFiniteSteps = 0;
    int rollbacks = 0;  // steps the recovery policy rolled back (a summary counts Rollback events)
    int skippedSteps = 0;        // updates not applied
    int scalerSkippedSteps = 0;  // of those, skipped by the loss scaler for overflowing gradients
    double stepMillis = 0.0;
    Origin firstOrigin;  // of the first step that failed (StepRecord::failed), its step set; invalid: none
    std::vector<int> nonFiniteStepsPerLayer;  // by layer id: steps whose output or gradient was non-finite
    std::vector<std::int64_t> quarantined;    // sample indices, in the order they were quarantined

    StepTally() = default;
    explicit StepTally(std::size_t layers) : nonFiniteStepsPerLayer(layers, 0) {}

    void add(const StepRecord &record);
    void add(const StepTally &later);  // a later stretch of the same run
    // Into a summary: the counts, the first non-finite step and its origin, the per-layer counts,
    // the quarantined samples (sorted, once each) and the speed in steps per second. Not the
    // rollbacks: the user's happen between steps, so a summary counts the Rollback events.
    void fill(RunSummary &summary) const;
};

}  // namespace nanscope
