// Gloo's process group: TCP between the ranks, on host tensors.
#include "distributed/collectives.h"

#if NANSCOPE_HAVE_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

namespace nanscope {

namespace {

class GlooCollectives : public Collectives {
public:
    GlooCollectives(const StorePtr &store, int rank, int world, const std::string &address,
                    std::chrono::milliseconds timeout)
    {
        auto options = c10d::ProcessGroupGloo::Options::create(timeout);
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(address));
        group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world, options);
    }
    void allReduceSum(std::vector<at::Tensor> &tensors) override { group_->allreduce(tensors)->wait(); }
    void broadcast(std::vector<at::Tensor> &tensors, int root) override
    {
        c10d::BroadcastOptions o;
        o.rootRank = root;
        group_->broadcast(tensors, o)->wait();
    }
    c10::Device device() const override { return c10::Device(c10::DeviceType::CPU); }
    std::string name() const override { return "Gloo"; }

private:
    c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
};

}  // namespace

std::unique_ptr<Collectives> glooCollectives(const StorePtr &store, int rank, int world, const std::string &address,
                                             std::chrono::milliseconds timeout)
{
    return std::make_unique<GlooCollectives>(store, rank, world, address, timeout);
}

}  // namespace nanscope

#else  // built without Gloo's headers

#include <stdexcept>

namespace nanscope {

std::unique_ptr<Collectives> glooCollectives(const StorePtr &, int, int, const std::string &, std::chrono::milliseconds)
{
    throw std::runtime_error("this NaNScope was built without Gloo (libgloo-dev)");
}

}  // namespace nanscope

#endif
