// The command line's end of steering (python/nanscope/steering.py is the loop's): a request sent
// (steer_request.h), then the run file read until the loop's event names it.
#include "cli_steer.h"

#include "cli_args.h"
#include "nanscope/run_file.h"
#include "nanscope/steer_request.h"

#include <array>
#include <chrono>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <thread>

namespace nanscope::cli {

namespace {

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
    const std::string runId = steerableRunId(file.info(), o.path);  // RunFileError: exit 1 with why
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

    SteerRequest request;
    request.learningRate = o.lr;
    request.setClip = o.clipGiven;
    request.clip = o.clip;
    request.policy = o.policy;
    request.decide = o.decide;
    const std::string id = sendSteerRequest(o.path, runId, request);

    // Acknowledged: applied (and, with --decide, decided), or refused with the loop's reason.
    const bool changes = o.lr || o.clipGiven || !o.policy.empty();
    bool applied = !changes, decided = o.decide.empty();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeoutSeconds);
    while (std::chrono::steady_clock::now() < until) {
        for (const Event &e : file.readEvents(seen, &seen)) {
            const SteerAnswer answer = steerAnswer(e, id);
            if (answer == SteerAnswer::Refused) {
                err << "nanscope: the loop refused: " << e.text << '\n';
                return 1;
            }
            if (answer == SteerAnswer::None)
                continue;
            out << "step " << e.step << ": " << e.text << '\n';
            applied = applied || answer == SteerAnswer::Applied;
            decided = decided || answer == SteerAnswer::Decided;
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
