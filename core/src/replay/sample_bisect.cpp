#include "replay/sample_bisect.h"

#include <algorithm>

namespace nanscope {

namespace {

std::vector<std::size_t> smallestFailing(std::vector<std::size_t> set,
                                         const std::function<bool(const std::vector<std::size_t> &)> &fails,
                                         int &replays)
{
    while (set.size() > 1) {
        const auto half = set.begin() + std::ptrdiff_t(set.size() / 2);
        const std::vector<std::size_t> a(set.begin(), half), b(half, set.end());
        ++replays;
        if (fails(a)) {
            set = a;
            continue;
        }
        ++replays;
        if (fails(b)) {
            set = b;
            continue;
        }
        break;  // it takes rows of both halves
    }
    return set;
}

// A set that fails while neither half does may hold one culprit that cannot be computed alone
// (BatchNorm takes no batch of one) or whose effect needs company: each of its rows is tried
// together with the rest of the batch, when the rest alone does not fail. Empty when none fails so.
std::vector<std::size_t> singlesAmongGood(const std::vector<std::size_t> &all, const std::vector<std::size_t> &found,
                                          const std::function<bool(const std::vector<std::size_t> &)> &fails,
                                          int &replays)
{
    std::vector<std::size_t> good;
    for (std::size_t row : all)
        if (std::find(found.begin(), found.end(), row) == found.end())
            good.push_back(row);
    if (good.empty())
        return {};
    ++replays;
    if (fails(good))
        return {};
    std::vector<std::size_t> singles;
    for (std::size_t row : found) {
        std::vector<std::size_t> with = good;
        with.push_back(row);
        std::sort(with.begin(), with.end());
        ++replays;
        if (fails(with))
            singles.push_back(row);
    }
    return singles;
}

}  // namespace

BisectResult bisectRows(std::size_t n, const std::function<bool(const std::vector<std::size_t> &)> &fails, int maxSets)
{
    BisectResult r;
    std::vector<std::size_t> rest(n);
    for (std::size_t i = 0; i < n; ++i)
        rest[i] = i;
    for (int round = 0;; ++round) {
        if (round > 0) {
            ++r.replays;
            if (rest.empty() || !fails(rest))
                break;
            if (round == maxSets) {  // it fails whatever is left out
                r.rows.clear();
                r.anySample = true;
                return r;
            }
        }
        const std::vector<std::size_t> set = smallestFailing(rest, fails, r.replays);
        const std::vector<std::size_t> found = set.size() > 1 ? singlesAmongGood(rest, set, fails, r.replays) : set;
        r.rows.insert(r.rows.end(), found.begin(), found.end());
        if (found.empty()) {
            r.rows.insert(r.rows.end(), set.begin(), set.end());
            r.together = true;
            break;
        }
        for (std::size_t row : found)
            rest.erase(std::remove(rest.begin(), rest.end(), row), rest.end());
    }
    std::sort(r.rows.begin(), r.rows.end());
    return r;
}

}  // namespace nanscope
