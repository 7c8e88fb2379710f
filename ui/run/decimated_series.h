#pragma once
// A step series of bounded size for plots: consecutive steps fold into buckets that keep the
// minimum, the maximum and whether any value was NaN or ±Inf. When the buckets pass the
// capacity, neighbours merge and the bucket width doubles, so memory stays bounded over any run
// length while extremes and non-finite steps are never dropped.
#include "nanscope/step_chunk.h"

#include <cstddef>
#include <vector>

namespace nanscope {

class DecimatedSeries {
public:
    explicit DecimatedSeries(std::size_t capacity = 2048);

    void append(int step, double value);
    // Values already folded (a run file's chunk): the width first grows to hold them.
    void appendBucket(const SeriesBucket &bucket);
    void clear();

    const std::vector<SeriesBucket> &buckets() const { return buckets_; }
    int valuesPerBucket() const { return width_; }
    long long valueCount() const { return values_; }
    std::size_t capacity() const { return capacity_; }

private:
    void halve();

    std::size_t capacity_;
    int width_ = 1;
    long long values_ = 0;
    std::vector<SeriesBucket> buckets_;
};

// Decades between the smallest positive and the largest finite value of `series` (0 without two
// positive finite values): a loss that grows from 1 to 1e25 spans 25. On a linear axis such a
// series is a flat line and then a cliff.
double decadesSpanned(const DecimatedSeries &series);

}  // namespace nanscope
