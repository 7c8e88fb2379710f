#pragma once
// The ranks of one data-parallel job over c10d, the layer PyTorch's own data parallelism runs on:
// a TCPStore for the rendezvous (rank 0 serves it) and Gloo for the collectives, on CPU tensors.
// c10d's headers stay in rank_group.cpp: they are slow to compile and need USE_C10D_GLOO.
#include "nanscope/run_config.h"

#include <ATen/core/Tensor.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nanscope {

class RankGroupError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class RankGroup {
public:
    // Joins the job; throws RankGroupError (one line) when the store or a rank cannot be reached
    // within the job's timeout.
    explicit RankGroup(const DataParallel &job);
    ~RankGroup();
    RankGroup(const RankGroup &) = delete;
    RankGroup &operator=(const RankGroup &) = delete;

    int rank() const { return rank_; }
    int world() const { return world_; }
    // In place on every rank: the elementwise sum of every rank's tensors (of one shape everywhere).
    // A rank that vanished or stopped answering throws RankGroupError naming it where it can.
    void allReduceSum(std::vector<at::Tensor> &tensors);
    // In place on every rank: `root`'s tensors.
    void broadcast(std::vector<at::Tensor> &tensors, int root);

private:
    [[noreturn]] void lost(const std::exception &e, const char *what);

    struct Impl;
    std::unique_ptr<Impl> impl_;
    int rank_ = 0;
    int world_ = 1;
};

}  // namespace nanscope
