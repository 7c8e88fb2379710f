#pragma once
// Which rows of a failing batch make it fail, by halving: O(log n) replays a culprit.
#include <cstddef>
#include <functional>
#include <vector>

namespace nanscope {

struct BisectResult {
    std::vector<std::size_t> rows;  // in ascending order
    int replays = 0;                // calls of the predicate
    // A set of more than one row that fails together while neither half fails alone (samples a
    // batch statistic couples, or a step that needs several samples to fail).
    bool together = false;
    // `maxSets` single rows each failed alone and the rest still fails: the step fails whatever
    // the samples (weights already too large, say). `rows` is then empty.
    bool anySample = false;
};

// `fails(rows)` computes the step on those rows of the batch, which fails on all `n`. Finds the
// smallest failing set by halving, then, while the rest of the batch still fails, the next one,
// up to `maxSets` sets; stops at the first set that fails only together. Rows are named only when
// the batch without them no longer fails.
BisectResult bisectRows(std::size_t n, const std::function<bool(const std::vector<std::size_t> &)> &fails,
                        int maxSets = 8);

}  // namespace nanscope
