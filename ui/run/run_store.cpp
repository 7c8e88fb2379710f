#include "run/run_store.h"

namespace nanscope {

RunStore::RunStore(std::size_t seriesCapacity, std::size_t mapCapacity)
    : series_{DecimatedSeries(seriesCapacity), DecimatedSeries(seriesCapacity), DecimatedSeries(seriesCapacity),
              DecimatedSeries(seriesCapacity), DecimatedSeries(seriesCapacity)},
      skipped_(seriesCapacity), map_(mapCapacity)
{
}

void RunStore::reset(const std::vector<Layer> &layers)
{
    layers_ = layers;
    for (DecimatedSeries &s : series_)
        s.clear();
    skipped_.clear();
    lossScaling_ = false;
    map_.reset(int(layers.size()));
    marks_.clear();
    warnings_.clear();
    firstOrigin_ = Origin{};
    steps_ = 0;
    lastStep_ = -1;
}

void RunStore::append(const StepRecord &r)
{
    series_[int(Series::Loss)].append(r.step, r.loss);
    series_[int(Series::GradNorm)].append(r.step, r.gradNorm);
    series_[int(Series::GradNormClipped)].append(r.step, r.gradNormClipped);
    series_[int(Series::LearningRate)].append(r.step, r.learningRate);
    series_[int(Series::LossScale)].append(r.step, r.lossScale);
    if (r.skipped)
        skipped_.append(r.step, r.lossScale);
    lossScaling_ = lossScaling_ || r.lossScale != 1.0;
    map_.append(r);
    if (r.failed() && !firstOrigin_.valid())
        firstOrigin_ = r.origin;
    ++steps_;
    lastStep_ = r.step;
}

void RunStore::appendChunk(const StepChunk &c)
{
    for (int s = 0; s < kSeriesCount; ++s)
        series_[s].appendBucket(c.series[std::size_t(s)]);
    skipped_.appendBucket(c.skipped);
    const SeriesBucket &scale = c.series[int(Series::LossScale)];
    lossScaling_ =
        lossScaling_ || scale.hasNonFinite() || (scale.finiteCount > 0 && (scale.min != 1.0 || scale.max != 1.0));
    map_.appendChunk(c);
    if (c.tally.firstOrigin.valid() && !firstOrigin_.valid())
        firstOrigin_ = c.tally.firstOrigin;
    steps_ += c.tally.steps;
    lastStep_ = c.lastStep;
}

// A user dragging the LR slider for a minute must not grow the marks without bound: the oldest
// marks go, the event log keeps the full story.
void RunStore::addControlMark(int step, const std::string &text)
{
    if (marks_.size() >= markCapacity_)
        marks_.erase(marks_.begin());
    marks_.push_back({step, text});
}

void RunStore::addWarning(int step, int layer, const std::string &text)
{
    if (warnings_.size() >= markCapacity_)
        warnings_.erase(warnings_.begin());
    warnings_.push_back({step, layer, text});
}

void RunStore::copyMarks(const RunStore &from)
{
    marks_ = from.marks_;
    warnings_ = from.warnings_;
    firstOrigin_ = from.firstOrigin_;
}

}  // namespace nanscope
