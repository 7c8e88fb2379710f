// NCCL's process group: GPU to GPU, one GPU per rank, where LibTorch was built with it.
#include "distributed/collectives.h"

#include <torch/cuda.h>
#include <torch/version.h>

#if NANSCOPE_HAVE_NCCL
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include <cstdio>
#include <cstdlib>

#define NANSCOPE_TORCH_AT_LEAST(major, minor)                                                                          \
    (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace nanscope {

namespace {

class NcclCollectives : public Collectives {
public:
    NcclCollectives(const StorePtr &store, int rank, int world, std::chrono::milliseconds timeout)
        : device_(c10::Device(c10::DeviceType::CUDA, c10::cuda::current_device()))
    {
        // A blocking wait() throws when a rank is lost, where NCCL's watchdog would abort the
        // process: the caller then names the rank, and the run files get their summaries. A
        // user's own setting stays.
#if NANSCOPE_TORCH_AT_LEAST(2, 2)
        ::setenv("TORCH_NCCL_BLOCKING_WAIT", "1", 0);
#else
        ::setenv("NCCL_BLOCKING_WAIT", "1", 0);
#endif
        auto options = c10d::ProcessGroupNCCL::Options::create();
        options->timeout = timeout;
        group_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world, options);
    }
#if NANSCOPE_TORCH_AT_LEAST(2, 4)
    ~NcclCollectives() override
    {
        // LibTorch warns of a group left open at exit. After a lost rank, shutdown() would wait
        // for work that never ends: abort() instead.
        try {
            failed_ ? group_->abort() : group_->shutdown();
        } catch (...) {
        }
    }
#endif
    void allReduceSum(std::vector<at::Tensor> &tensors) override
    {
        guarded([&] { group_->allreduce(tensors)->wait(); });
    }
    void broadcast(std::vector<at::Tensor> &tensors, int root) override
    {
        c10d::BroadcastOptions o;
        o.rootRank = root;
        guarded([&] { group_->broadcast(tensors, o)->wait(); });
    }
    c10::Device device() const override { return device_; }
    std::string name() const override { return "NCCL on " + device_.str(); }

private:
    template <typename F> void guarded(F &&collective)
    {
        try {
            collective();
        } catch (...) {
            failed_ = true;
            throw;
        }
    }

    c10::Device device_;
    c10::intrusive_ptr<c10d::ProcessGroupNCCL> group_;
    bool failed_ = false;
};

}  // namespace

std::unique_ptr<Collectives> ncclCollectives(const StorePtr &store, int rank, int world,
                                             std::chrono::milliseconds timeout)
{
    return std::make_unique<NcclCollectives>(store, rank, world, timeout);
}

std::string ncclGpu(std::string &why)
{
    if (!torch::cuda::is_available()) {
        why = "LibTorch sees no CUDA device";
        return {};
    }
    const cudaDeviceProp *p = at::cuda::getDeviceProperties(c10::cuda::current_device());
    char id[32];
    std::snprintf(id, sizeof id, "%04x:%02x:%02x.0", unsigned(p->pciDomainID), unsigned(p->pciBusID),
                  unsigned(p->pciDeviceID));
    return id;
}

}  // namespace nanscope

#else  // built without NCCL

#include <stdexcept>

namespace nanscope {

namespace {

const char *const kWithoutNccl =
    "this NaNScope was built without NCCL (it needs a LibTorch with CUDA and NCCL, and nccl.h)";

}  // namespace

std::unique_ptr<Collectives> ncclCollectives(const StorePtr &, int, int, std::chrono::milliseconds)
{
    throw std::runtime_error(kWithoutNccl);
}

std::string ncclGpu(std::string &why)
{
    why = kWithoutNccl;
    return {};
}

}  // namespace nanscope

#endif
