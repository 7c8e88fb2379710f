// The command line's end of steering (python/nanscope/steering.py is the loop's): a request sent
// (steer_request.h) to a loop, or to every rank of a data-parallel job's folder, then the run
// files read until each loop's event names it.
#include "cli_steer.h"

#include "cli_args.h"
#include "nanscope/job_folder.h"
#include "nanscope/run_file.h"
#include "nanscope/steer_request.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
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
// A job's ranks read their request files every quarter second: a change is set this far ahead
// (in seconds of steps, at least 3 steps) so that every rank reads it before its step comes.
constexpr double kJobLeadSeconds = 2.0;

struct SteerOptions {
    std::string path;
    std::optional<double> lr;
    bool clipGiven = false;
    std::optional<double> clip;  // empty with clipGiven: off
    std::string policy;
    std::string decide;
    int timeoutSeconds = 60;
};

// One loop being steered: a rank of a job, or the loop alone (rank -1).
struct Loop {
    int rank = -1;
    std::string path;
    std::unique_ptr<RunFile> file;
    std::string runId;
    std::int64_t seenEvents = 0;
    std::string request;  // its id, once sent
    bool applied = false, decided = false;
    std::string prefix() const { return rank >= 0 ? "rank " + std::to_string(rank) + ": " : std::string(); }
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

std::vector<Loop> loopsAt(const std::string &path)
{
    std::vector<Loop> loops;
    if (std::filesystem::is_directory(path)) {
        for (const JobRank &r : jobRunFiles(path))
            loops.push_back({r.rank, r.path});
    } else {
        loops.push_back({-1, path});
    }
    for (Loop &l : loops) {
        l.file = std::make_unique<RunFile>(l.path);
        l.runId = steerableRunId(l.file->info(), l.path);  // RunFileError: exit 1 with why
    }
    return loops;
}

// Whether every loop's writer still beats its heartbeat; `stepsPerSecond` gets the fastest rate
// seen meanwhile.
bool writersAlive(std::vector<Loop> &loops, double &stepsPerSecond, std::string &why)
{
    std::vector<std::int64_t> beats, steps;
    for (const Loop &l : loops) {
        if (l.file->info().finished) {
            why = l.path + ": the run has finished: no loop reads it";
            return false;
        }
        beats.push_back(l.file->info().heartbeat);
        steps.push_back(l.file->lastStep());
    }
    const auto begun = std::chrono::steady_clock::now();
    std::vector<bool> alive(loops.size(), false);
    // A job's rate is measured over a second at least: its changes are set ahead by it.
    const auto measuring = [&] {
        const auto elapsed = std::chrono::steady_clock::now() - begun;
        return elapsed < kAliveWithin && (std::find(alive.begin(), alive.end(), false) != alive.end() ||
                                          (loops.size() > 1 && elapsed < std::chrono::seconds(1)));
    };
    while (measuring()) {
        std::this_thread::sleep_for(kPoll);
        for (std::size_t i = 0; i < loops.size(); ++i) {
            loops[i].file->refresh();
            alive[i] = alive[i] || loops[i].file->info().heartbeat != beats[i];
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
    stepsPerSecond = 0;
    for (std::size_t i = 0; i < loops.size(); ++i) {
        if (loops[i].file->info().finished || !alive[i]) {
            why = "no loop has written " + loops[i].path + " for " + std::to_string(kAliveWithin.count()) +
                  " s: it is not running (killed?)";
            return false;
        }
        stepsPerSecond = std::max(stepsPerSecond, double(loops[i].file->lastStep() - steps[i]) / seconds);
    }
    return true;
}

}  // namespace

int steerCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    SteerOptions o;
    Arguments("steer")
        .positional("FILE.nsrun|FOLDER", [&](const auto &, const auto &v) { o.path = v; })
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
        throw std::invalid_argument("steer needs the run file a Python loop records into, or a job's folder");
    if (!o.lr && !o.clipGiven && o.policy.empty() && o.decide.empty())
        throw std::invalid_argument("nothing to ask: give --lr, --clip, --policy or --decide");

    std::vector<Loop> loops = loopsAt(o.path);
    double stepsPerSecond = 0;
    std::string why;
    if (!writersAlive(loops, stepsPerSecond, why)) {
        err << "nanscope: " << why << '\n';
        return 1;
    }
    SteerRequest request;
    request.learningRate = o.lr;
    request.setClip = o.clipGiven;
    request.clip = o.clip;
    request.policy = o.policy;
    request.decide = o.decide;
    const bool changes = o.lr || o.clipGiven || !o.policy.empty();
    if (loops.size() > 1 && changes) {
        // Every rank changes at one step, or their parameters would part.
        std::int64_t last = 0;
        for (const Loop &l : loops)
            last = std::max<std::int64_t>(last, l.file->lastStep());
        request.atStep = int(last + std::max<std::int64_t>(3, std::int64_t(std::ceil(stepsPerSecond * kJobLeadSeconds))));
    }
    for (Loop &l : loops) {
        l.file->readEvents(0, &l.seenEvents);  // only the events after the request count
        l.request = sendSteerRequest(l.path, l.runId, request);
        l.applied = !changes;
        l.decided = o.decide.empty();
    }

    // Acknowledged: applied (and, with --decide, decided) by every loop, or refused by one.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeoutSeconds);
    while (std::chrono::steady_clock::now() < until) {
        bool all = true;
        for (Loop &l : loops) {
            for (const Event &e : l.file->readEvents(l.seenEvents, &l.seenEvents)) {
                const SteerAnswer answer = steerAnswer(e, l.request);
                if (answer == SteerAnswer::Refused) {
                    err << "nanscope: " << l.prefix() << "the loop refused: " << e.text << '\n';
                    return 1;
                }
                if (answer == SteerAnswer::None)
                    continue;
                out << l.prefix() << "step " << e.step << ": " << e.text << '\n';
                l.applied = l.applied || answer == SteerAnswer::Applied;
                l.decided = l.decided || answer == SteerAnswer::Decided;
            }
            all = all && l.applied && l.decided;
        }
        if (all)
            return 0;
        for (Loop &l : loops) {
            l.file->refresh();
            if (l.file->info().finished && !(l.applied && l.decided)) {
                err << "nanscope: " << l.prefix() << "the run finished before its loop read the request\n";
                return 1;
            }
        }
        std::this_thread::sleep_for(kPoll);
    }
    err << "nanscope: the loop did not acknowledge the request within " << o.timeoutSeconds
        << " s (it reads requests between steps: a long step, --timeout; a decision needs a paused loop)\n";
    return 1;
}

}  // namespace nanscope::cli
