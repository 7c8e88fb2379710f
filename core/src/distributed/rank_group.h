#pragma once
// The ranks of one data-parallel job over c10d, the layer PyTorch's own data parallelism runs on:
// a TCPStore for the rendezvous (rank 0 serves it), and Gloo (on host tensors) or NCCL (on each
// rank's GPU) for the collectives. c10d's headers stay in the .cpp files: they are slow to compile.
#include "nanscope/run_config.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

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
    // Joins the job of ranks that train on `device` ("cpu" or "cuda"); throws RankGroupError (one
    // line) when the store or a rank cannot be reached within the job's timeout, or when NCCL was
    // asked for and a rank cannot use it.
    RankGroup(const DataParallel &job, const std::string &device);
    ~RankGroup();
    RankGroup(const RankGroup &) = delete;
    RankGroup &operator=(const RankGroup &) = delete;

    int rank() const { return rank_; }
    int world() const { return world_; }
    // The collectives chosen ("Gloo", "NCCL on cuda:0"), and the device their tensors live on.
    std::string backendName() const;
    c10::Device device() const;
    // In place on every rank: the elementwise sum of every rank's tensors (of one shape everywhere).
    // A rank that vanished or stopped answering throws RankGroupError naming it where it can.
    void allReduceSum(std::vector<at::Tensor> &tensors);
    // In place on every rank: `root`'s tensors.
    void broadcast(std::vector<at::Tensor> &tensors, int root);

private:
    static std::string offer(const DataParallel &job, const std::string &device);
    bool useNccl();
    [[noreturn]] void lost(const std::exception &e, const char *what);

    struct Impl;
    std::unique_ptr<Impl> impl_;
    int rank_ = 0;
    int world_ = 1;
};

// A CUDA rank's GPU, made the current device of the calling thread: LOCAL_RANK's (else the
// rank's), modulo the GPUs there are. Returns its index, or -1 when there is no GPU.
int useRankGpu(const DataParallel &job);

}  // namespace nanscope
