#pragma once
// A step series of bounded size for plots: consecutive steps fold into buckets that keep the
// minimum, the maximum and whether any value was NaN or ±Inf. When the buckets pass the
// capacity, neighbours merge and the bucket width doubles, so memory stays bounded over any run
// length while extremes and non-finite steps are never dropped.
#include <cstddef>
#include <vector>

namespace nanscope {

struct SeriesBucket {
    int firstStep = 0;
    int lastStep = 0;
    int count = 0;  // values folded into this bucket
    int finiteCount = 0;
    double min = 0.0;  // over the finite values (meaningless when finiteCount == 0)
    double max = 0.0;
    int firstNonFiniteStep = -1;  // -1: every value was finite
    double firstNonFiniteValue = 0.0;

    bool hasNonFinite() const { return firstNonFiniteStep >= 0; }
    void fold(const SeriesBucket &later);
};

class DecimatedSeries {
public:
    explicit DecimatedSeries(std::size_t capacity = 2048);

    void append(int step, double value);
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

}  // namespace nanscope
