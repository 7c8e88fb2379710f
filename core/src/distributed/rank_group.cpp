#include "distributed/rank_group.h"

#include "distributed/collectives.h"
#include "distributed/collectives_choice.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/cuda.h>

namespace nanscope {

int useRankGpu(const DataParallel &job)
{
    const auto gpus = int(torch::cuda::device_count());
    if (gpus == 0)
        return -1;
    const int index = (job.localRank >= 0 ? job.localRank : job.rank) % gpus;
    // The calling thread's current device, as torch.cuda.set_device(LOCAL_RANK) sets it: "cuda"
    // means this GPU for the model, the data and the collectives.
    c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)
        ->setDevice(c10::Device(c10::DeviceType::CUDA, c10::DeviceIndex(index)));
    return index;
}

}  // namespace nanscope

#if NANSCOPE_HAVE_C10D
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <c10/util/Logging.h>
#ifdef C10_USE_GLOG  // Debian's LibTorch logs through glog
#include <glog/logging.h>
#endif

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <thread>

namespace nanscope {

namespace {

std::string firstLine(const std::string &s)
{
    const auto nl = s.find('\n');
    return nl == std::string::npos ? s : s.substr(0, nl);
}

std::string hostName()
{
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    return name;
}

std::vector<std::uint8_t> bytesOf(const std::string &s) { return {s.begin(), s.end()}; }

// Gone, or a zombie its parent has not reaped yet.
bool processGone(long pid)
{
    if (::kill(pid_t(pid), 0) != 0)
        return errno == ESRCH;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto paren = line.rfind(')');
    return paren != std::string::npos && paren + 2 < line.size() && (line[paren + 2] == 'Z' || line[paren + 2] == 'X');
}

}  // namespace

struct RankGroup::Impl {
    StorePtr store;
    std::unique_ptr<Collectives> group;
    // Each rank's process and host, read at the rendezvous: a rank that vanishes can be named.
    std::vector<long> pids;
    std::vector<std::string> hosts;
};

RankGroup::RankGroup(const DataParallel &job, const std::string &device)
    : impl_(std::make_unique<Impl>()), rank_(job.rank), world_(job.world)
{
    const auto timeout = std::chrono::seconds(job.timeoutSeconds);
    // c10d logs each failed connection attempt to stderr; its errors reach the user as one line here.
#ifdef C10_USE_GLOG
    FLAGS_minloglevel = std::max(FLAGS_minloglevel, google::GLOG_FATAL);
#else
    FLAGS_caffe2_log_level = std::max(FLAGS_caffe2_log_level, 2);  // c10's own logging: errors and worse
#endif
    bool nccl = false;
    try {
        c10d::TCPStoreOptions o;
        o.port = std::uint16_t(job.port);
        o.isServer = job.rank == 0;
        o.numWorkers = job.world;
        o.waitWorkers = true;
        o.timeout = timeout;
        impl_->store = c10::make_intrusive<c10d::TCPStore>(job.address, o);
        impl_->store->set("nanscope/pid/" + std::to_string(rank_), bytesOf(std::to_string(::getpid())));
        impl_->store->set("nanscope/host/" + std::to_string(rank_), bytesOf(hostName()));
        impl_->store->set("nanscope/collectives/" + std::to_string(rank_), bytesOf(offer(job, device)));
        for (int r = 0; r < world_; ++r) {
            const std::vector<std::uint8_t> pid = impl_->store->get("nanscope/pid/" + std::to_string(r));
            const std::vector<std::uint8_t> host = impl_->store->get("nanscope/host/" + std::to_string(r));
            impl_->pids.push_back(std::stol(std::string(pid.begin(), pid.end())));
            impl_->hosts.emplace_back(host.begin(), host.end());
        }
        nccl = useNccl();
    } catch (const RankGroupError &) {
        throw;
    } catch (const std::exception &e) {
        throw RankGroupError("rank " + std::to_string(rank_) + " could not join the job of " + std::to_string(world_) +
                             " ranks at " + job.address + ":" + std::to_string(job.port) + " within " +
                             std::to_string(job.timeoutSeconds) + " s: " + firstLine(e.what()));
    }
    try {
        impl_->group = nccl ? ncclCollectives(impl_->store, rank_, world_, timeout)
                            : glooCollectives(impl_->store, rank_, world_, job.address, timeout);
    } catch (const std::exception &e) {
        throw RankGroupError("rank " + std::to_string(rank_) + " could not set up the job's " +
                             (nccl ? "NCCL" : "Gloo") + " collectives: " + firstLine(e.what()));
    }
}

RankGroup::~RankGroup() = default;

std::string RankGroup::offer(const DataParallel &job, const std::string &device)
{
    CollectivesOffer o;
    o.backend = collectiveBackendName(job.backend);
    o.why = "the job trains on the CPU";
    if (device == "cuda")
        o.gpu = ncclGpu(o.why);
    return o.encoded();
}

// Every rank reads every rank's offer, so every rank chooses alike.
bool RankGroup::useNccl()
{
    std::vector<CollectivesOffer> offers;
    std::vector<std::string> read;
    for (int r = 0; r < world_; ++r) {
        const std::vector<std::uint8_t> bytes = impl_->store->get("nanscope/collectives/" + std::to_string(r));
        offers.push_back(
            CollectivesOffer::decoded(std::string(bytes.begin(), bytes.end()), impl_->hosts[std::size_t(r)]));
        read.push_back("nanscope/offers-read/" + std::to_string(r));
    }
    // Rank 0 serves the store: where the choice is an error, it must not stop (and take the store
    // with it) before every rank has read the offers and can say the same.
    impl_->store->set(read[std::size_t(rank_)], bytesOf("1"));
    if (rank_ == 0)
        impl_->store->wait(read);
    return chooseNccl(offers);
}

std::string RankGroup::backendName() const { return impl_->group->name(); }

c10::Device RankGroup::device() const { return impl_->group->device(); }

void RankGroup::lost(const std::exception &e, const char *what)
{
    // Gloo says which connection broke, not which rank: a rank on this host whose process is
    // gone is named.
    const std::string host = hostName();
    std::string gone;
    // A killed process closes its sockets before it is a zombie: the broken connection can come
    // first, so a rank that is not gone yet gets a moment to be.
    for (int attempt = 0; attempt < 20 && gone.empty(); ++attempt) {
        if (attempt > 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        for (int r = 0; r < world_; ++r)
            if (r != rank_ && std::size_t(r) < impl_->pids.size() && impl_->hosts[std::size_t(r)] == host &&
                processGone(impl_->pids[std::size_t(r)]))
                gone += (gone.empty() ? "" : ", ") + std::to_string(r);
    }
    const std::string who = gone.empty() ? std::string("a rank of the job stopped answering")
                                         : "rank " + gone + " vanished (its process is gone)";
    throw RankGroupError(who + " during " + what + ": " + firstLine(e.what()));
}

void RankGroup::allReduceSum(std::vector<at::Tensor> &tensors)
{
    try {
        impl_->group->allReduceSum(tensors);
    } catch (const std::exception &e) {
        lost(e, "an all-reduce");
    }
}

void RankGroup::broadcast(std::vector<at::Tensor> &tensors, int root)
{
    try {
        impl_->group->broadcast(tensors, root);
    } catch (const std::exception &e) {
        lost(e, "a broadcast");
    }
}

}  // namespace nanscope

#else  // built without c10d's store

namespace nanscope {

struct RankGroup::Impl {};

RankGroup::RankGroup(const DataParallel &job, const std::string &) : rank_(job.rank), world_(job.world)
{
    throw RankGroupError("this NaNScope was built with a LibTorch without c10d: data-parallel jobs are unavailable");
}

RankGroup::~RankGroup() = default;

std::string RankGroup::offer(const DataParallel &, const std::string &) { return {}; }
bool RankGroup::useNccl() { return false; }
std::string RankGroup::backendName() const { return {}; }
c10::Device RankGroup::device() const { return c10::Device(c10::DeviceType::CPU); }

void RankGroup::lost(const std::exception &e, const char *) { throw RankGroupError(e.what()); }
void RankGroup::allReduceSum(std::vector<at::Tensor> &) {}
void RankGroup::broadcast(std::vector<at::Tensor> &, int) {}

}  // namespace nanscope

#endif
