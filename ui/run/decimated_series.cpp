#include "run/decimated_series.h"

#include <algorithm>

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

}  // namespace nanscope
