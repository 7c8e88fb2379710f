#pragma once
// What the ranks of a data-parallel job exchange each step: their maps before the gradient
// all-reduce (one small collective that names the ranks that went non-finite), the gradients
// averaged over the ranks that stayed finite, the buffers, and now and then their parameters'
// checksums. Every rank reaches the same decision from the same numbers.
#include "distributed/rank_group.h"
#include "model/model_adapter.h"

#include <optional>
#include <string>
#include <vector>

namespace nanscope {

// The ranks' maps of one step, gathered on every rank.
struct RankFindings {
    std::vector<int> badRanks;  // whose own step went non-finite, ascending
    // The first bad rank's origin (the lowest rank: they computed the step at the same time).
    int rank = -1;
    Phase phase = Phase::Input;
    int layer = -1;
    std::vector<double> losses;  // each rank's own loss
    // "rank 1: fc1 forward" for each bad rank.
    std::string text(const std::vector<Layer> &layers) const;
    std::vector<std::vector<double>> nonFinite;  // [rank][layer]: NaN/Inf values in its map
};

// The ranks whose parameters differ from the majority's (rank 0's on a tie), with the first layer
// where each differs.
struct RankDivergence {
    std::vector<std::pair<int, int>> ranks;  // (rank, layer)
};

class RankSync {
public:
    explicit RankSync(const DataParallel &job) : group_(job) {}

    int rank() const { return group_.rank(); }
    int world() const { return group_.world(); }
    // Rank 0's parameters and buffers on every rank, before the first step.
    void startFrom(ModelAdapter &model);
    // One collective of world x (layers + 4) numbers.
    RankFindings compare(const StepRecord &local, std::size_t layers);
    // The mean gradient of the ranks not `excluded`, on every rank (their own gradients, even where
    // finite, do not count). Returns its norm.
    double averageGradients(ModelAdapter &model, const std::vector<int> &excluded);
    // Every rank's buffers (BatchNorm's running statistics) become `root`'s.
    void shareBuffers(ModelAdapter &model, int root);
    // Compares each layer's parameter checksum across ranks.
    RankDivergence compareParameters(ModelAdapter &model);

private:
    RankGroup group_;
};

}  // namespace nanscope
