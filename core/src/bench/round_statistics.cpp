#include "bench/round_statistics.h"

#include <algorithm>
#include <cmath>

namespace nanscope {

RoundSpread spreadOf(std::vector<double> values)
{
    RoundSpread s;
    if (values.empty())
        return s;
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    s.median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    s.lowQuartile = values[n / 4];
    s.highQuartile = values[n * 3 / 4];
    // The median lies between the order statistics j and k (1-based) with 95% probability, where
    // j = floor(n/2 - 1.96 sqrt(n)/2) and k = ceil(1 + n/2 + 1.96 sqrt(n)/2): the normal
    // approximation of the binomial, as in the usual tables (n = 100: the 40th and 61st).
    const double halfWidth = 0.98 * std::sqrt(double(n));
    const double j = std::floor(double(n) / 2 - halfWidth);
    const double k = std::ceil(1 + double(n) / 2 + halfWidth);
    s.medianLow = values[std::size_t(std::max(1.0, j)) - 1];
    s.medianHigh = values[std::size_t(std::min(double(n), k)) - 1];
    return s;
}

}  // namespace nanscope
