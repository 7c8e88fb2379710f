#include "run/decimated_series.h"

#include <algorithm>
#include <cmath>

namespace nanscope {

void SeriesBucket::fold(const SeriesBucket &later)
{
    if (later.finiteCount > 0) {
        min = finiteCount > 0 ? std::min(min, later.min) : later.min;
        max = finiteCount > 0 ? std::max(max, later.max) : later.max;
    }
    if (!hasNonFinite() && later.hasNonFinite()) {
        firstNonFiniteStep = later.firstNonFiniteStep;
        firstNonFiniteValue = later.firstNonFiniteValue;
    }
    lastStep = later.lastStep;
    count += later.count;
    finiteCount += later.finiteCount;
}

DecimatedSeries::DecimatedSeries(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 2)) {}

void DecimatedSeries::append(int step, double value)
{
    SeriesBucket one;
    one.firstStep = one.lastStep = step;
    one.count = 1;
    if (std::isfinite(value)) {
        one.finiteCount = 1;
        one.min = one.max = value;
    } else {
        one.firstNonFiniteStep = step;
        one.firstNonFiniteValue = value;
    }
    ++values_;
    if (!buckets_.empty() && buckets_.back().count < width_)
        buckets_.back().fold(one);
    else
        buckets_.push_back(one);
    if (buckets_.size() > capacity_)
        halve();
}

// Every bucket but the last is full, so merging neighbours gives full buckets of twice the width.
void DecimatedSeries::halve()
{
    std::size_t out = 0;
    for (std::size_t i = 0; i < buckets_.size(); i += 2, ++out) {
        SeriesBucket merged = buckets_[i];
        if (i + 1 < buckets_.size())
            merged.fold(buckets_[i + 1]);
        buckets_[out] = merged;
    }
    buckets_.resize(out);
    width_ *= 2;
}

void DecimatedSeries::clear()
{
    buckets_.clear();
    width_ = 1;
    values_ = 0;
}

}  // namespace nanscope
