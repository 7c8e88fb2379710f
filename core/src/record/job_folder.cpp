#include "nanscope/job_folder.h"

#include "nanscope/capsule.h"
#include "nanscope/run_file.h"

#include <algorithm>
#include <filesystem>

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
    std::vector<JobRank> files;
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(folder, ec)) {
        if (entry.path().extension() != kRunFileExtension)
            continue;
        // The run row of a job's rank says which rank wrote it, whatever its name (a launcher's own
        // naming); other files count by their name (a file that cannot be read yet shows its error
        // when opened).
        int rank = rankInName(entry.path().filename().string());
        try {
            const RunFile file(entry.path().string());
            if (file.info().worldSize > 0)
                rank = file.info().rank;
        } catch (const RunFileError &) {
        }
        if (rank >= 0)
            files.push_back({rank, entry.path().string()});
    }
    if (files.empty())
        throw RunFileError(folder + ": is a folder that holds no rank's run file (a job's run folder, as run --ranks N "
                                    "--record FOLDER writes it)");
    std::sort(files.begin(), files.end(),
              [](const JobRank &a, const JobRank &b) { return a.rank != b.rank ? a.rank < b.rank : a.path < b.path; });
    for (std::size_t i = 1; i < files.size(); ++i)
        if (files[i].rank == files[i - 1].rank)
            throw RunFileError(folder + ": two run files are rank " + std::to_string(files[i].rank) +
                               "'s: " + std::filesystem::path(files[i - 1].path).filename().string() + " and " +
                               std::filesystem::path(files[i].path).filename().string() +
                               " (one folder holds one job)");
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
                rs.record = records.front();
        } catch (const RunFileError &e) {
            rs.error = e.what();
        }
        out.ranks.push_back(std::move(rs));
    }
    return out;
}

}  // namespace nanscope
