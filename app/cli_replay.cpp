#include "cli_replay.h"

#include "cli_args.h"
#include "cli_json.h"
#include "nanscope/job_folder.h"
#include "nanscope/replay.h"

#include <filesystem>
#include <iomanip>
#include <ostream>

namespace nanscope::cli {

namespace {

Json replayJson(const ReplayReport &r)
{
    Json whatIf = Json::array();
    for (const WhatIf &w : r.whatIf)
        whatIf.push_back({{"change", w.change}, {"from", w.from}, {"finite", w.finite}, {"note", textOrNull(w.note)}});
    return Json{{"type", "replay"},
                {"step", r.step},
                {"capsule", r.reason},
                {"verdict", replayVerdictId(r.verdict)},
                {"tolerance", r.tolerance},
                {"differs_at", r.differsAt >= 0 ? Json(r.differsAtPath) : Json()},
                {"differs", textOrNull(r.differsWhat)},
                {"recorded",
                 {{"failed", r.recordedFailed},
                  {"loss", jsonNumber(r.recordedLoss)},
                  {"grad_norm", jsonNumber(r.recordedGradNorm)}}},
                {"replayed",
                 {{"failed", r.replayedFailed},
                  {"loss", jsonNumber(r.replayedLoss)},
                  {"grad_norm", jsonNumber(r.replayedGradNorm)}}},
                {"origin", r.origin.valid() ? originJson(r.origin) : Json()},
                {"samples", r.samples},
                {"bisect_replays", r.bisectReplays},
                {"coupled_by", r.coupledBy},
                {"what_if", whatIf},
                {"device", r.device},
                {"threads", r.threads},
                {"notes", r.notes},
                {"load_ms", jsonNumber(r.loadMillis)},
                {"replay_ms", jsonNumber(r.replayMillis)},
                {"total_ms", jsonNumber(r.totalMillis)}};
}

void printReplay(const ReplayReport &r, std::ostream &out)
{
    out << "step " << r.step << " (capsule: " << r.reason << ") replayed on " << r.device << ", " << r.threads
        << (r.threads == 1 ? " thread" : " threads") << '\n';
    out << "verdict: " << replayVerdictId(r.verdict);
    if (r.verdict == ReplayVerdict::ReproducedNumerically)
        out << " (within a relative " << r.tolerance << ")";
    out << '\n';
    out << "  recorded: loss " << r.recordedLoss << ", gradient norm " << r.recordedGradNorm
        << (r.recordedFailed ? ", non-finite" : ", finite") << '\n';
    out << "  replayed: loss " << r.replayedLoss << ", gradient norm " << r.replayedGradNorm
        << (r.replayedFailed ? ", non-finite" : ", finite") << '\n';
    if (r.differsAt >= 0)
        out << "  first layer that differs: '" << r.differsAtPath << "' (" << r.differsWhat << ")\n";
    else if (!r.differsWhat.empty())
        out << "  differs: " << r.differsWhat << '\n';
    if (r.origin.valid()) {
        out << "origin: phase " << phaseName(r.origin.phase) << ", layer '" << r.origin.layerPath << "', op "
            << (r.origin.op.empty() ? "(not named)" : r.origin.op);
        if (!r.origin.source.empty())
            out << " at " << r.origin.source;
        out << '\n';
        if (!r.origin.chain.empty())
            out << "  " << r.origin.chain << '\n';
        out << "  " << r.origin.explanation << '\n';
    }
    if (!r.samples.empty()) {
        out << "samples that make the step non-finite:";
        for (std::int64_t s : r.samples)
            out << ' ' << s;
        out << " (" << r.bisectReplays << " replays)\n";
    }
    if (!r.whatIf.empty()) {
        out << "what if:\n";
        for (const WhatIf &w : r.whatIf)
            out << "  " << std::left << std::setw(13) << ("from " + w.from) << ' ' << std::setw(24) << w.change
                << std::right << ' ' << (w.finite ? "finite" : "non-finite")
                << (w.note.empty() ? "" : " (" + w.note + ")") << '\n';
    }
    for (const std::string &n : r.notes)
        out << "note: " << n << '\n';
}

}  // namespace

namespace {

// The rank asked for, or the one whose first non-finite step came first.
JobRank rankToReplay(const std::string &folder, int asked)
{
    const std::vector<JobRank> ranks = jobRunFiles(folder);
    if (asked < 0)
        return firstFailingRank(ranks);
    for (const JobRank &r : ranks)
        if (r.rank == asked)
            return r;
    throw std::invalid_argument(folder + " holds no run file of rank " + std::to_string(asked));
}

}  // namespace

int replayCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    std::string path;
    ReplayOptions options;
    bool json = false, noSamples = false, noWhatIf = false;
    int rank = -1;
    Arguments arguments("replay");
    arguments.positional("FILE", [&](const auto &, const auto &v) { path = v; })
        .option("--step", [&](const auto &flag, const auto &v) { options.step = parseInt(flag, v, 0); })
        .option("--device", [&](const auto &flag, const auto &v) { options.device = parseDevice(flag, v); })
        .option("--threads", [&](const auto &flag, const auto &v) { options.threads = parseInt(flag, v, 1); })
        .option("--rank", [&](const auto &flag, const auto &v) { rank = parseInt(flag, v, 0); })
        .flag("--no-samples", noSamples)
        .flag("--no-what-if", noWhatIf)
        .flag("--json", json);
    arguments.parse(args);
    if (path.empty())
        throw std::invalid_argument("replay needs a run file: nanscope replay FILE.nsrun");
    if (std::filesystem::is_directory(path)) {
        const JobRank chosen = rankToReplay(path, rank);
        rank = chosen.rank;
        path = chosen.path;
        if (!json)
            err << "replaying rank " << rank << "'s capsule: " << path << '\n';
    } else if (rank >= 0) {
        throw std::invalid_argument("--rank picks a rank of a job's run folder; " + path + " is one run file");
    }
    options.samples = !noSamples;
    options.whatIf = !noWhatIf;
    if (!json)
        options.progress = [&err](const std::string &what) { err << what << "...\n"; };
    const ReplayReport report = replayCapsule(path, options);
    if (json) {
        Json j = replayJson(report);
        if (rank >= 0)
            j["rank"] = rank;
        out << jsonLine(j) << '\n';
    } else
        printReplay(report, out);
    return 0;
}

}  // namespace nanscope::cli
