#include "run/decimated_series.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nanscope {

DecimatedSeries::DecimatedSeries(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 2)) {}

void DecimatedSeries::append(int step, double value) { appendBucket(SeriesBucket::of(step, value)); }

void DecimatedSeries::appendBucket(const SeriesBucket &b)
{
    if (b.count <= 0)
        return;
    while (width_ < b.count)
        halve();
    values_ += b.count;
    if (!buckets_.empty() && buckets_.back().count + b.count <= width_)
        buckets_.back().fold(b);
    else
        buckets_.push_back(b);
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

double decadesSpanned(const DecimatedSeries &series)
{
    double largest = 0.0, smallestPositive = std::numeric_limits<double>::infinity();
    for (const SeriesBucket &b : series.buckets()) {
        if (b.finiteCount == 0 || b.max <= 0.0)
            continue;
        largest = std::max(largest, b.max);
        // A bucket whose minimum is not positive holds at least its maximum as a positive value.
        smallestPositive = std::min(smallestPositive, b.min > 0.0 ? b.min : b.max);
    }
    if (largest <= 0.0 || !std::isfinite(smallestPositive))
        return 0.0;
    return std::log10(largest / smallestPositive);
}

}  // namespace nanscope
