#pragma once
// A sum over many values on the host, fast and without losing precision: `kLanes` independent
// partial sums the compiler can keep in vector registers, folded into a double every `kBlock`
// values. Used where a tensor op per step would cost more in dispatch than the arithmetic itself.
#include <algorithm>
#include <cstdint>

namespace nanscope {

// The sum over i in [0, n) of term(i), where term returns a T (float or double).
template <typename T, typename Term> double sumInLanes(std::int64_t n, Term term)
{
    constexpr int kLanes = 8;
    constexpr std::int64_t kBlock = 4096;
    double total = 0;
    for (std::int64_t start = 0; start < n; start += kBlock) {
        const std::int64_t end = std::min(n, start + kBlock);
        T lanes[kLanes] = {};
        std::int64_t i = start;
        for (; i + kLanes <= end; i += kLanes)
            for (int l = 0; l < kLanes; ++l)
                lanes[l] += term(i + l);
        for (; i < end; ++i)
            total += double(term(i));
        for (T v : lanes)
            total += double(v);
    }
    return total;
}

}  // namespace nanscope
