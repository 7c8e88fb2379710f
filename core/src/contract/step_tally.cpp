#include "nanscope/step_tally.h"

#include <algorithm>
#include <set>

namespace nanscope {

void StepTally::add(const StepRecord &r)
{
    ++steps;
    if (r.nonFinite()) {
        ++nonFiniteSteps;
        if (r.failed() && !firstOrigin.valid()) {
            firstOrigin = r.origin;
            firstOrigin.step = r.step;  // as a run file reads it back: the step whose row holds it
        }
    }
    rollbacks += r.rolledBack ? 1 : 0;
    skippedSteps += r.skipped ? 1 : 0;
    scalerSkippedSteps += r.overflowLayers.empty() ? 0 : 1;
    stepMillis += r.stepMillis;
    quarantined.insert(quarantined.end(), r.quarantined.begin(), r.quarantined.end());
    if (nonFiniteStepsPerLayer.size() < r.layers.size())
        nonFiniteStepsPerLayer.resize(r.layers.size(), 0);
    for (std::size_t i = 0; i < r.layers.size(); ++i)
        nonFiniteStepsPerLayer[i] += r.layers[i].nonFinite() ? 1 : 0;
}

void StepTally::add(const StepTally &later)
{
    steps += later.steps;
    nonFiniteSteps += later.nonFiniteSteps;
    rollbacks += later.rollbacks;
    skippedSteps += later.skippedSteps;
    scalerSkippedSteps += later.scalerSkippedSteps;
    stepMillis += later.stepMillis;
    if (!firstOrigin.valid())
        firstOrigin = later.firstOrigin;
    if (nonFiniteStepsPerLayer.size() < later.nonFiniteStepsPerLayer.size())
        nonFiniteStepsPerLayer.resize(later.nonFiniteStepsPerLayer.size(), 0);
    for (std::size_t i = 0; i < later.nonFiniteStepsPerLayer.size(); ++i)
        nonFiniteStepsPerLayer[i] += later.nonFiniteStepsPerLayer[i];
    quarantined.insert(quarantined.end(), later.quarantined.begin(), later.quarantined.end());
}

void StepTally::fill(RunSummary &s) const
{
    s.stepsRun = steps;
    s.nonFiniteSteps = nonFiniteSteps;
    s.firstNonFiniteStep = firstOrigin.valid() ? firstOrigin.step : -1;
    s.origin = firstOrigin;
    s.skippedSteps = skippedSteps;
    s.scalerSkippedSteps = scalerSkippedSteps;
    if (s.nonFiniteStepsPerLayer.size() < nonFiniteStepsPerLayer.size())
        s.nonFiniteStepsPerLayer.resize(nonFiniteStepsPerLayer.size(), 0);
    std::copy(nonFiniteStepsPerLayer.begin(), nonFiniteStepsPerLayer.end(), s.nonFiniteStepsPerLayer.begin());
    const std::set<std::int64_t> unique(quarantined.begin(), quarantined.end());
    s.quarantinedSamples.assign(unique.begin(), unique.end());
    s.stepsPerSecond = stepMillis > 0 ? steps / (stepMillis / 1000.0) : 0.0;
}

}  // namespace nanscope
