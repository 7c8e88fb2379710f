#include "cli_ranks.h"

#include "cli_args.h"
#include "job_report.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <stdexcept>

namespace nanscope::cli {

namespace {

int environmentNumber(const char *name, int min)
{
    const char *v = std::getenv(name);
    if (!v || !*v)
        throw std::invalid_argument(std::string(name) +
                                    " is not set: a rank of a job needs RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT");
    return parseInt(name, v, min);
}

// A port the store can listen on: the kernel's choice on the loopback interface.
int freeLoopbackPort()
{
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    const bool ok = s >= 0 && ::bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 &&
                    ::getsockname(s, reinterpret_cast<sockaddr *>(&a), &len) == 0;
    if (s >= 0)
        ::close(s);
    if (!ok)
        throw std::runtime_error("no free port on 127.0.0.1 for the job's store");
    return ntohs(a.sin_port);
}

// The `run` command line each rank gets: the launcher's own, less what the launcher decides.
std::vector<std::string> rankArguments(const std::vector<std::string> &args)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string &a = args[i];
        if (a == "--ranks" || a == "--record") {
            ++i;
            continue;
        }
        if (a.rfind("--ranks=", 0) == 0 || a.rfind("--record=", 0) == 0 || a == "--json")
            continue;
        out.push_back(a);
    }
    out.push_back("--json");
    return out;
}

struct RankProcess {
    int rank = 0;
    pid_t pid = -1;
    int out = -1, err = -1;
    std::string outLine, errLine;
};

RankProcess spawn(int rank, int world, int port, std::vector<std::string> args)
{
    int out[2], err[2];
    if (::pipe(out) != 0 || ::pipe(err) != 0)
        throw std::runtime_error("cannot start the job's ranks: no pipes left");
    const pid_t pid = ::fork();
    if (pid < 0)
        throw std::runtime_error("cannot start rank " + std::to_string(rank) + ": fork failed");
    if (pid == 0) {
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        ::close(out[0]);
        ::close(err[0]);
        ::setenv("RANK", std::to_string(rank).c_str(), 1);
        ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
        ::setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
        ::setenv("MASTER_ADDR", "127.0.0.1", 1);
        ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
        std::vector<char *> argv;
        static char name[] = "nanscope";
        argv.push_back(name);
        for (std::string &a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv("/proc/self/exe", argv.data());
        ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    return {rank, pid, out[0], err[0], {}, {}};
}

// Splits what `fd` has into lines; false at its end.
bool readLines(int fd, std::string &pending, const std::function<void(const std::string &)> &line)
{
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) {
        if (!pending.empty())
            line(pending);
        pending.clear();
        return false;
    }
    pending.append(buf, std::size_t(n));
    for (auto nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
        line(pending.substr(0, nl));
        pending.erase(0, nl + 1);
    }
    return true;
}

}  // namespace

void addRankOptions(Arguments &arguments, RunOptions &o)
{
    DataParallel &p = o.config.parallel;
    arguments.option("--ranks", [&](const auto &flag, const auto &v) { o.ranks = parseInt(flag, v, 1); })
        .option("--on-bad-rank",
                [&](const auto &flag, const auto &v) {
                    if (v != "skip" && v != "exclude")
                        throw std::invalid_argument(flag + " is skip or exclude, got '" + v + "'");
                    p.onBadRank = v == "skip" ? BadRankPolicy::Skip : BadRankPolicy::Exclude;
                })
        .option("--param-check-every", [&](const auto &flag, const auto &v) { p.checkEvery = parseInt(flag, v, 0); })
        .option("--collective-timeout",
                [&](const auto &flag, const auto &v) { p.timeoutSeconds = parseInt(flag, v, 1); })
        .option("--backend", [&](const auto &flag, const auto &v) { p.backend = parseBackend(flag, v); });
}

void rankFromEnvironment(RunConfig &config)
{
    if (!std::getenv("WORLD_SIZE"))
        return;
    DataParallel &p = config.parallel;
    p.world = environmentNumber("WORLD_SIZE", 1);
    p.rank = environmentNumber("RANK", 0);
    if (p.rank >= p.world)
        throw std::invalid_argument("RANK=" + std::to_string(p.rank) + " is not a rank of a job of WORLD_SIZE=" +
                                    std::to_string(p.world) + " (0 to " + std::to_string(p.world - 1) + ")");
    const char *address = std::getenv("MASTER_ADDR");
    if (!address || !*address)
        throw std::invalid_argument("MASTER_ADDR is not set: the address of rank 0's store");
    p.address = address;
    p.port = environmentNumber("MASTER_PORT", 1);
    if (const char *local = std::getenv("LOCAL_RANK"); local && *local)
        p.localRank = environmentNumber("LOCAL_RANK", 0);
    if (p.port > 65535)
        throw std::invalid_argument("MASTER_PORT=" + std::to_string(p.port) + " is not a port (1 to 65535)");
}

int runRanks(const RunOptions &o, const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    if (std::getenv("WORLD_SIZE"))
        throw std::invalid_argument("--ranks starts a job itself and cannot run as a rank of one (WORLD_SIZE is set)");
    if (o.config.controls && o.config.controls->pauseOnNonFinite)
        throw std::invalid_argument("--pause-on-nonfinite needs one run to pause; the ranks of a job decide together");
    if (o.config.fault.rank >= o.ranks)
        throw std::invalid_argument("--inject-fault names rank " + std::to_string(o.config.fault.rank) +
                                    ", not one of the job's " + std::to_string(o.ranks));
    if (o.config.nanSample.active() && o.config.nanSample.rank < 0)
        throw std::invalid_argument("in a job, a NaN sample names its rank: --inject nan-sample@RANK:STEP");
    if (o.config.nanSample.rank >= o.ranks)
        throw std::invalid_argument("--inject names rank " + std::to_string(o.config.nanSample.rank) +
                                    ", not one of the job's " + std::to_string(o.ranks));
    return launchRanks(o.ranks, o.json, o.record.path, args, out, err);
}

int launchRanks(int world, bool json, const std::string &folder, const std::vector<std::string> &args,
                std::ostream &out, std::ostream &err)
{
    if (!folder.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(folder, ec);
        if (!std::filesystem::is_directory(folder))
            throw std::invalid_argument("--record with --ranks names a folder for the ranks' run files; '" + folder +
                                        "' is not one");
    }
    const int port = freeLoopbackPort();
    if (!json)
        out << "job of " << world << " ranks, store on 127.0.0.1:" << port
            << (folder.empty() ? std::string() : ", run files in " + folder) << '\n';
    std::vector<RankProcess> ranks;
    for (int r = 0; r < world; ++r) {
        std::vector<std::string> a = rankArguments(args);
        if (!folder.empty()) {
            a.push_back("--record");
            a.push_back((std::filesystem::path(folder) / ("rank-" + std::to_string(r) + ".nsrun")).string());
        }
        ranks.push_back(spawn(r, world, port, a));
    }
    JobReport report(world, json, out);
    std::size_t open = 2 * ranks.size();
    while (open > 0) {
        std::vector<pollfd> fds;
        for (const RankProcess &r : ranks)
            for (int fd : {r.out, r.err})
                if (fd >= 0)
                    fds.push_back({fd, POLLIN, 0});
        if (::poll(fds.data(), fds.size(), -1) < 0)
            continue;
        for (const pollfd &f : fds) {
            if (!(f.revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            for (RankProcess &r : ranks) {
                if (f.fd == r.out &&
                    !readLines(r.out, r.outLine, [&](const std::string &l) { report.line(r.rank, l); })) {
                    ::close(r.out);
                    r.out = -1;
                    report.rankEnded(r.rank);
                    --open;
                } else if (f.fd == r.err && !readLines(r.err, r.errLine, [&](const std::string &l) {
                               err << "rank " << r.rank << ": " << l << '\n';
                           })) {
                    ::close(r.err);
                    r.err = -1;
                    --open;
                }
            }
        }
        out.flush();
    }
    report.finish();
    int code = 0;
    for (const RankProcess &r : ranks) {
        int status = 0;
        ::waitpid(r.pid, &status, 0);
        if (WIFSIGNALED(status)) {
            err << "nanscope: rank " << r.rank << " was killed by signal " << WTERMSIG(status) << '\n';
            code = std::max(code, 1);
        } else if (WIFEXITED(status)) {
            code = std::max(code, WEXITSTATUS(status));
        }
    }
    return code;
}

}  // namespace nanscope::cli
