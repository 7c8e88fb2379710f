// The command line's end of steering (python/nanscope/steering.py is the loop's): one JSON line
// appended to RUN.nsrun.steer, then the run file read until the loop's event names the request.
#include "cli_steer.h"

#include "cli_args.h"
#include "nanscope/run_file.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <ostream>
#include <random>
#include <stdexcept>
#include <thread>
#include <unistd.h>

namespace nanscope::cli {

namespace {

constexpr int kRequestFormat = 1;  // steering.py's REQUEST_FORMAT
constexpr std::array<const char *, 5> kPolicies{"record", "skip", "rollback", "raise", "pause"};
constexpr std::array<const char *, 4> kDecisions{"continue", "skip", "rollback", "stop"};
constexpr auto kAliveWithin = std::chrono::seconds(3);  // the writer beats about once a second
constexpr auto kPoll = std::chrono::milliseconds(100);

struct SteerOptions {
    std::string path;
    std::optional<double> lr;
    bool clipGiven = false;
    std::optional<double> clip;  // empty with clipGiven: off
    std::string policy;
    std::string decide;
    int timeoutSeconds = 60;
};

template <std::size_t N>
std::string oneOf(const std::string &flag, const std::string &value, const std::array<const char *, N> &allowed)
{
    std::string list;
    for (const char *a : allowed) {
        if (value == a)
            return value;
        list += (list.empty() ? "" : "|") + std::string(a);
    }
    throw std::invalid_argument(flag + " is " + list + ", got '" + value + "'");
}

std::string newRequestId()
{
    std::random_device random;
    char id[9];
    std::snprintf(id, sizeof id, "%08x", unsigned(random()));
    return id;
}

// The run's id, for the loop to tell a request for it from one for a run that replaced it.
std::string steerableRunId(const RunFile &file)
{
    const nlohmann::json config = nlohmann::json::parse(file.info().configText, nullptr, false);
    const nlohmann::json recorder = config.is_object() ? config.value("recorder", nlohmann::json()) : nlohmann::json();
    if (!recorder.is_object() || recorder.value("kind", "") != "python")
        throw std::runtime_error(file.path() + " was not written by a Python loop (nanscope.record): a run that "
                                               "NaNScope trains is steered in its window");
    if (!recorder.value("steerable", false) || !recorder.contains("run_id"))
        throw std::runtime_error(file.path() + "'s loop does not read requests (recorded with steer=False, or by an "
                                               "older nanscope.record)");
    return recorder["run_id"].get<std::string>();
}

// Whether a writer still beats the file's heartbeat.
bool writerAlive(RunFile &file)
{
    const std::int64_t beat = file.info().heartbeat;
    const auto until = std::chrono::steady_clock::now() + kAliveWithin;
    while (std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(kPoll);
        file.refresh();
        if (file.info().heartbeat != beat || file.info().finished)
            return !file.info().finished;
    }
    return false;
}

void append(const std::string &requestFile, const std::string &line)
{
    // Never created here: the loop makes it, with the run file's permissions, when it starts.
    const int fd = ::open(requestFile.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        throw std::runtime_error("no loop reads requests: " + requestFile + ": " + std::strerror(errno));
    const ssize_t written = ::write(fd, line.data(), line.size());  // one write: lines never interleave
    const int error = errno;
    ::close(fd);
    if (written != ssize_t(line.size()))
        throw std::runtime_error("cannot write " + requestFile + ": " + std::strerror(error));
}

}  // namespace

int steerCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    SteerOptions o;
    Arguments("steer")
        .positional("FILE.nsrun", [&](const auto &, const auto &v) { o.path = v; })
        .option("--lr",
                [&](const auto &f, const auto &v) {
                    const double lr = parseNumber(f, v);
                    if (!(lr > 0))
                        throw std::invalid_argument(f + " must be above 0, got '" + v + "'");
                    o.lr = lr;
                })
        .option("--clip",
                [&](const auto &f, const auto &v) {
                    o.clip = parsePositiveOrOff(f, v);
                    o.clipGiven = true;
                })
        .option("--policy", [&](const auto &f, const auto &v) { o.policy = oneOf(f, v, kPolicies); })
        .option("--decide", [&](const auto &f, const auto &v) { o.decide = oneOf(f, v, kDecisions); })
        .option("--timeout", [&](const auto &f, const auto &v) { o.timeoutSeconds = parseInt(f, v, 1); })
        .parse(args);
    if (o.path.empty())
        throw std::invalid_argument("steer needs the run file a Python loop records into");
    if (!o.lr && !o.clipGiven && o.policy.empty() && o.decide.empty())
        throw std::invalid_argument("nothing to ask: give --lr, --clip, --policy or --decide");

    RunFile file(o.path);
    std::string runId;
    try {
        runId = steerableRunId(file);
    } catch (const std::runtime_error &e) {
        err << "nanscope: " << e.what() << '\n';
        return 1;
    }
    if (file.info().finished) {
        err << "nanscope: " << o.path << ": the run has finished: no loop reads it\n";
        return 1;
    }
    if (!writerAlive(file)) {
        err << "nanscope: no loop has written " << o.path << " for " << kAliveWithin.count()
            << " s: it is not running (killed?)\n";
        return 1;
    }
    std::int64_t seen = 0;
    file.readEvents(0, &seen);  // only the events after the request count

    const std::string id = newRequestId();
    nlohmann::json request{{"format", kRequestFormat}, {"run", runId}, {"id", id}};
    if (o.lr)
        request["lr"] = *o.lr;
    if (o.clipGiven)
        request["clip"] = o.clip ? nlohmann::json(*o.clip) : nlohmann::json("off");
    if (!o.policy.empty())
        request["policy"] = o.policy;
    if (!o.decide.empty())
        request["decide"] = o.decide;
    try {
        append(o.path + ".steer", request.dump() + "\n");
    } catch (const std::runtime_error &e) {
        err << "nanscope: " << e.what() << '\n';
        return 1;
    }

    // Acknowledged: applied (and, with --decide, decided), or refused with the loop's reason.
    const bool changes = o.lr || o.clipGiven || !o.policy.empty();
    bool applied = !changes, decided = o.decide.empty();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeoutSeconds);
    while (std::chrono::steady_clock::now() < until) {
        for (const Event &e : file.readEvents(seen, &seen)) {
            const auto &args = e.message.args;
            if (args.empty() || args.back() != id)
                continue;
            if (e.message.id == "steer-refused") {
                err << "nanscope: the loop refused: " << e.text << '\n';
                return 1;
            }
            out << "step " << e.step << ": " << e.text << '\n';
            applied = applied || e.message.id == "steer-applied";
            decided = decided || e.message.id == "pause-decided";
        }
        if (applied && decided)
            return 0;
        file.refresh();
        if (file.info().finished) {
            err << "nanscope: the run finished before its loop read the request\n";
            return 1;
        }
        std::this_thread::sleep_for(kPoll);
    }
    err << "nanscope: the loop did not acknowledge request " << id << " within " << o.timeoutSeconds
        << " s (it reads requests between steps: a long step, --timeout; a decision needs a paused loop)\n";
    return 1;
}

}  // namespace nanscope::cli
