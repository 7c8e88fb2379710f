// NCCL's process group: GPU to GPU, one GPU per rank, where LibTorch was built with it.
#include "distributed/collectives.h"

#include <torch/cuda.h>
#include <torch/version.h>

#if NANSCOPE_HAVE_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

namespace nanscope {

namespace {

class NcclCollectives : public Collectives {
public:
    NcclCollectives(const StorePtr &store, int rank, int world, std::chrono::milliseconds timeout)
        : device_(c10::Device(c10::DeviceType::CUDA, c10::cuda::current_device()))
    {
        auto options = c10d::ProcessGroupNCCL::Options::create();
        options->timeout = timeout;
        group_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world, options);
    }
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    ~NcclCollectives() override { group_->shutdown(); }  // else LibTorch warns of a group left open at exit
#endif
    // NCCL's wait() only orders the current stream after the collective; whoever reads the result
    // on the host synchronises, as any read of a CUDA tensor does.
    void allReduceSum(std::vector<at::Tensor> &tensors) override { group_->allreduce(tensors)->wait(); }
    void broadcast(std::vector<at::Tensor> &tensors, int root) override
    {
        c10d::BroadcastOptions o;
        o.rootRank = root;
        group_->broadcast(tensors, o)->wait();
    }
    c10::Device device() const override { return device_; }
    std::string name() const override { return "NCCL on " + device_.str(); }

private:
    c10::Device device_;
    c10::intrusive_ptr<c10d::ProcessGroupNCCL> group_;
};

}  // namespace

std::unique_ptr<Collectives> ncclCollectives(const StorePtr &store, int rank, int world,
                                             std::chrono::milliseconds timeout)
{
    return std::make_unique<NcclCollectives>(store, rank, world, timeout);
}

std::string ncclUnavailableReason(int localRank)
{
    if (!torch::cuda::is_available())
        return "LibTorch sees no CUDA device";
    if (localRank < 0)
        return "LOCAL_RANK is not set, so which GPU is this rank's is not known";
    const auto gpus = int(torch::cuda::device_count());
    if (localRank >= gpus)
        return "LOCAL_RANK " + std::to_string(localRank) + " has no GPU of its own (this machine has " +
               std::to_string(gpus) + ")";
    return {};
}

}  // namespace nanscope

#else  // built without NCCL

#include <stdexcept>

namespace nanscope {

std::unique_ptr<Collectives> ncclCollectives(const StorePtr &, int, int, std::chrono::milliseconds)
{
    throw std::runtime_error(ncclUnavailableReason(0));
}

std::string ncclUnavailableReason(int)
{
    return "this NaNScope was built without NCCL (it needs a LibTorch with CUDA and NCCL, and nccl.h)";
}

}  // namespace nanscope

#endif
