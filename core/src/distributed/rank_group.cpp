#include "distributed/rank_group.h"

#if NANSCOPE_HAVE_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef C10_USE_GLOG  // Debian's LibTorch logs through glog
#include <glog/logging.h>
#endif

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>

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
    c10::intrusive_ptr<c10d::Store> store;
    c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
    // Each rank's process and host, read at the rendezvous: a rank that vanishes can be named.
    std::vector<long> pids;
    std::vector<std::string> hosts;
};

RankGroup::RankGroup(const DataParallel &job) : impl_(std::make_unique<Impl>()), rank_(job.rank), world_(job.world)
{
    const auto timeout = std::chrono::seconds(job.timeoutSeconds);
#ifdef C10_USE_GLOG
    // c10d logs each failed connection attempt to stderr; its errors reach the user as one line here.
    FLAGS_minloglevel = std::max(FLAGS_minloglevel, google::GLOG_FATAL);
#endif
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
        auto options = c10d::ProcessGroupGloo::Options::create(timeout);
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(job.address));
        impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, rank_, world_, options);
        for (int r = 0; r < world_; ++r) {
            const std::vector<std::uint8_t> pid = impl_->store->get("nanscope/pid/" + std::to_string(r));
            const std::vector<std::uint8_t> host = impl_->store->get("nanscope/host/" + std::to_string(r));
            impl_->pids.push_back(std::stol(std::string(pid.begin(), pid.end())));
            impl_->hosts.emplace_back(host.begin(), host.end());
        }
    } catch (const std::exception &e) {
        throw RankGroupError("rank " + std::to_string(rank_) + " could not join the job of " + std::to_string(world_) +
                             " ranks at " + job.address + ":" + std::to_string(job.port) + " within " +
                             std::to_string(job.timeoutSeconds) + " s: " + firstLine(e.what()));
    }
}

RankGroup::~RankGroup() = default;

void RankGroup::lost(const std::exception &e, const char *what)
{
    // Gloo says which connection broke, not which rank: a rank on this host whose process is
    // gone is named.
    const std::string host = hostName();
    std::string gone;
    for (int r = 0; r < world_; ++r)
        if (r != rank_ && std::size_t(r) < impl_->pids.size() && impl_->hosts[std::size_t(r)] == host &&
            processGone(impl_->pids[std::size_t(r)]))
            gone += (gone.empty() ? "" : ", ") + std::to_string(r);
    const std::string who = gone.empty() ? std::string("a rank of the job stopped answering")
                                         : "rank " + gone + " vanished (its process is gone)";
    throw RankGroupError(who + " during " + what + ": " + firstLine(e.what()));
}

void RankGroup::allReduceSum(std::vector<at::Tensor> &tensors)
{
    try {
        impl_->group->allreduce(tensors)->wait();
    } catch (const std::exception &e) {
        lost(e, "an all-reduce");
    }
}

void RankGroup::broadcast(std::vector<at::Tensor> &tensors, int root)
{
    try {
        c10d::BroadcastOptions o;
        o.rootRank = root;
        impl_->group->broadcast(tensors, o)->wait();
    } catch (const std::exception &e) {
        lost(e, "a broadcast");
    }
}

}  // namespace nanscope

#else  // built without Gloo's headers

namespace nanscope {

struct RankGroup::Impl {};

RankGroup::RankGroup(const DataParallel &job) : rank_(job.rank), world_(job.world)
{
    throw RankGroupError("this NaNScope was built without Gloo (libgloo-dev): data-parallel jobs are unavailable");
}

RankGroup::~RankGroup() = default;

void RankGroup::lost(const std::exception &e, const char *) { throw RankGroupError(e.what()); }
void RankGroup::allReduceSum(std::vector<at::Tensor> &) {}
void RankGroup::broadcast(std::vector<at::Tensor> &, int) {}

}  // namespace nanscope

#endif
