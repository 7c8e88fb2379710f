#include "nanscope/job_folder.h"

#include "nanscope/capsule_file.h"
#include "nanscope/run_file.h"

#include <algorithm>
#include <filesystem>
#include <map>

namespace nanscope {

namespace {

// rank-R.nsrun names rank R; -1 for any other name.
int rankInName(const std::string &name)
{
    const std::string prefix = "rank-", suffix = kRunFileExtension;
    if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0)
        return -1;
    const std::string number = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (number.size() >= 6 || number.find_first_not_of("0123456789") != std::string::npos)
        return -1;
    return std::stoi(number);
}

}  // namespace

std::vector<JobRank> jobRunFiles(const std::string &folder)
{
    struct Candidate {
        std::string path, name;
        int named = -1;  // the rank its name says (rank-R.nsrun)
        bool readable = false;
        int rank = -1;  // the rank its run row says
        int world = 0;  // 0: a run of its own, or a file that cannot be read (yet)
        // The job it belongs to: the ranks of one job meet at one store and train one thing.
        std::string job;
        std::string describeJob() const { return name + " (world size " + std::to_string(world) + ", " + job + ")"; }
    };
    std::vector<Candidate> candidates;
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(folder, ec)) {
        if (entry.path().extension() != kRunFileExtension)
            continue;
        Candidate c;
        c.path = entry.path().string();
        c.name = entry.path().filename().string();
        c.named = rankInName(c.name);
        try {
            const RunFile file(c.path);
            c.readable = true;
            c.rank = file.info().rank;
            c.world = file.info().worldSize;
            const RunConfig &config = file.info().config;
            c.job = "store " + config.parallel.address + ":" + std::to_string(config.parallel.port) + ", " +
                    // a model's bytes, not its path, which may differ from machine to machine
                    (config.isRecordedLoop()   ? "loop " + config.recordedLoop
                     : config.usesModelFile() ? "model " + file.info().modelSha256.substr(0, 12)
                                              : config.scenario) +
                    // a recorded loop's ranks may seed each their own way
                    (config.isRecordedLoop() ? std::string() : ", seed " + std::to_string(config.seed));
        } catch (const RunFileError &) {
            // counted by its name; its error shows when it is opened
        }
        candidates.push_back(std::move(c));
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const Candidate &a, const Candidate &b) { return a.name < b.name; });
    // The run rows of a job's ranks say which rank wrote each file, whatever its name (a launcher's
    // own naming), and of how many. Where no file says so (runs of their own copied in, files not
    // written yet), the names do.
    const auto job = std::find_if(candidates.begin(), candidates.end(), [](const Candidate &c) { return c.world > 0; });
    // Each rank's candidates, best first: a job's file whose name agrees, then a job's file of
    // another name, then a file counted by its name alone (unreadable, or a run of its own where no
    // file is a job's).
    std::map<int, std::vector<std::pair<int, const Candidate *>>> byRank;
    for (const Candidate &c : candidates) {
        if (job != candidates.end() && c.world > 0 && (c.world != job->world || c.job != job->job))
            throw RunFileError(folder + ": holds the files of different jobs: " + job->describeJob() + " and " +
                               c.describeJob());
        int rank = -1, preference = 0;
        if (c.world > 0) {
            rank = c.rank;
            preference = c.named == rank ? 3 : 2;
        } else if (job == candidates.end() || (!c.readable && c.named < job->world)) {
            rank = c.named;  // beside a job's ranks, a run of its own is none of them
            preference = 1;
        }
        if (rank >= 0)
            byRank[rank].emplace_back(preference, &c);
    }
    if (byRank.empty())
        throw RunFileError(folder + ": is a folder that holds no rank's run file (a job's run folder, as run --ranks N "
                                    "--record FOLDER writes it)");
    // Two files of one rank (a copy saved beside it): the best is the rank's; two equally good
    // ones, and the folder cannot say.
    std::vector<JobRank> files;
    for (auto &[rank, found] : byRank) {
        std::stable_sort(found.begin(), found.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
        if (found.size() > 1 && found[0].first == found[1].first)
            throw RunFileError(folder + ": two run files are rank " + std::to_string(rank) + "'s: " +
                               found[0].second->name + " and " + found[1].second->name + " (one folder holds one job)");
        files.push_back({rank, found.front().second->path});
    }
    return files;
}

JobFailure firstJobFailure(const std::vector<JobRank> &ranks)
{
    JobFailure first;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        int step = -1;
        try {
            for (const CapsuleEntry &c : runFileCapsules(ranks[i].path))
                if (c.reason == kCapsuleFirstNonFinite && (step < 0 || c.step < step))
                    step = c.step;
            if (step < 0) {
                const RunFile file(ranks[i].path);
                if (file.info().finished)
                    step = file.info().summary.firstNonFiniteStep;
            }
        } catch (const RunFileError &) {
            // a rank's file that cannot be read is opened, and its error shown, on its own
        }
        if (step >= 0 && (first.step < 0 || step < first.step))
            first = {int(i), step};
    }
    return first;
}

const JobRank &firstFailingRank(const std::vector<JobRank> &ranks)
{
    const JobFailure first = firstJobFailure(ranks);
    return ranks.at(std::size_t(std::max(first.rankIndex, 0)));
}

JobStep readJobStep(const std::vector<JobRank> &ranks, int step)
{
    JobStep out;
    out.step = step;
    for (const JobRank &r : ranks) {
        RankStep rs;
        rs.rank = r.rank;
        try {
            const RunFile file(r.path);
            if (out.layers.empty())
                out.layers = file.layers();
            out.lastStep = std::max(out.lastStep, file.lastStep());
            const std::vector<StepRecordPtr> records = file.readSteps(step - 1, 1);
            if (!records.empty() && records.front()->step == step)
                rs.record = withChunkLayers(file, records.front());  // a thinned step: its chunk's
        } catch (const RunFileError &e) {
            rs.error = e.what();
        }
        out.ranks.push_back(std::move(rs));
    }
    return out;
}

}  // namespace nanscope
