#pragma once
// One process group's collectives behind one small interface, so the ranks' code is the same over
// Gloo (host memory) and NCCL (GPU memory). c10d's process-group headers stay in the two .cpp files
// that build them: they are slow to compile, and each needs its own define and headers.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/util/intrusive_ptr.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace c10d {
class Store;
}

namespace nanscope {

class Collectives {
public:
    virtual ~Collectives() = default;
    // In place, waited for: the elementwise sum over the ranks; `root`'s tensors on every rank.
    virtual void allReduceSum(std::vector<at::Tensor> &tensors) = 0;
    virtual void broadcast(std::vector<at::Tensor> &tensors, int root) = 0;
    // Where the tensors handed to it must live.
    virtual c10::Device device() const = 0;
    virtual std::string name() const = 0;  // "Gloo", "NCCL on cuda:0"
};

using StorePtr = c10::intrusive_ptr<c10d::Store>;

// Gloo over TCP on the interface that reaches `address`. Throws when this build has no Gloo.
std::unique_ptr<Collectives> glooCollectives(const StorePtr &store, int rank, int world, const std::string &address,
                                             std::chrono::milliseconds timeout);

// NCCL on the current CUDA device; a collective that outlasts `timeout` throws (it would otherwise
// abort the process from NCCL's watchdog). Throws when this build has no NCCL.
std::unique_ptr<Collectives> ncclCollectives(const StorePtr &store, int rank, int world,
                                             std::chrono::milliseconds timeout);
// The current CUDA device as NCCL tells GPUs apart (its PCI address, "0000:3b:00.0"), or empty
// with `why` said when this rank cannot take part in an NCCL job.
std::string ncclGpu(std::string &why);

}  // namespace nanscope
