#pragma once
// What the ranks of a data-parallel job exchange each step: their maps before the gradient
// all-reduce (a few hundred bytes in front of the gradients, in the same collective, naming the
// ranks that went non-finite), the gradients averaged over the ranks that stayed finite, the
// buffers, and now and then their parameters' checksums. Every rank reaches the same decision
// from the same numbers.
#include "distributed/rank_group.h"
#include "model_api/model_adapter.h"

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
    std::vector<double> losses;  // each rank's own loss (0 where it was not finite)
    // "rank 1: fc1 forward" for each bad rank.
    std::string text(const std::vector<Layer> &layers) const;
    std::vector<std::vector<double>> nonFinite;  // [rank][layer]: NaN/Inf values in its map
};

// The ranks whose parameters differ from the majority's (rank 0's on a tie), with the first layer
// where each differs.
struct RankDivergence {
    std::vector<std::pair<int, int>> ranks;  // (rank, layer)
};

// Gradients summed over the ranks in one all-reduce: flat entries [first, last) in order.
struct SummedBucket {
    at::Tensor sum;
    std::size_t first = 0, last = 0;
};

class RankSync {
public:
    // Each parameter's gradient as a flat tensor on the collectives' device (a view of it where it
    // can be, else a copy that putBack() writes into it).
    struct Gradients {
        std::vector<at::Tensor> params, flat;
    };

    // `device`: where the ranks train ("cpu" or "cuda").
    RankSync(const DataParallel &job, const std::string &device) : group_(job, device) {}

    int rank() const { return group_.rank(); }
    int world() const { return group_.world(); }
    std::string backendName() const { return group_.backendName(); }
    // Rank 0's parameters and buffers on every rank, before the first step.
    void startFrom(ModelAdapter &model);
    // The step's one collective: this rank's row of the ranks' map (world x (layers + 4) numbers:
    // whether its step went non-finite, its origin's phase and layer, its loss, each layer's
    // non-finite count) travels in front of its gradients, which are zeros where its own step went
    // non-finite (NaN must not reach the sum). Afterwards every rank holds the same findings and
    // the sum of the finite ranks' gradients.
    RankFindings exchange(const StepRecord &local, ModelAdapter &model, std::size_t layers);
    // A plain data-parallel loop's all-reduce: every rank's gradients summed and divided by
    // `ranks`, a bucket at a time (the benchmark's baseline).
    void sumGradients(ModelAdapter &model, int ranks);
    // The gradients exchange() summed, divided by the number of ranks they came from (one op a
    // bucket) and put into the parameters' gradients; returns the mean's norm. Until then each
    // gradient is still this rank's own: a step skipped on every rank copies nothing back.
    double divideGradients(int ranks);
    // A step skipped on every rank: the sums exchange() holds are dropped.
    void discardPending();
    // Every rank's buffers (BatchNorm's running statistics) become `root`'s, in one broadcast per
    // dtype.
    void shareBuffers(ModelAdapter &model, int root);
    // Compares each layer's parameter checksum across ranks.
    RankDivergence compareParameters(ModelAdapter &model);

private:
    RankGroup group_;
    Gradients pending_;  // of the last exchange: the table, then the gradients
    std::vector<SummedBucket> pendingBuckets_;
};

}  // namespace nanscope
