#include "nanscope/job_folder.h"

#include "nanscope/capsule.h"
#include "nanscope/run_file.h"

#include <algorithm>
#include <filesystem>

namespace nanscope {

std::vector<JobRank> jobRunFiles(const std::string &folder)
{
    std::vector<JobRank> files;
    std::error_code ec;
    const std::string prefix = "rank-", suffix = kRunFileExtension;
    for (const auto &entry : std::filesystem::directory_iterator(folder, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
            continue;
        const std::string number = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
        if (number.size() < 6 && number.find_first_not_of("0123456789") == std::string::npos)
            files.push_back({std::stoi(number), entry.path().string()});
    }
    if (files.empty())
        throw RunFileError(folder +
                           ": is a folder that holds no rank-R.nsrun file (a job's run folder, as run --ranks N "
                           "--record FOLDER writes it)");
    std::sort(files.begin(), files.end(), [](const JobRank &a, const JobRank &b) { return a.rank < b.rank; });
    return files;
}

const JobRank &firstFailingRank(const std::vector<JobRank> &ranks)
{
    const JobRank *chosen = &ranks.front();
    int earliest = -1;
    for (const JobRank &r : ranks) {
        try {
            for (const CapsuleEntry &c : runFileCapsules(r.path))
                if (c.reason == kCapsuleFirstNonFinite && (earliest < 0 || c.step < earliest)) {
                    earliest = c.step;
                    chosen = &r;
                }
        } catch (const RunFileError &) {
            // a rank's file that cannot be read is opened, and its error shown, on its own
        }
    }
    return *chosen;
}

}  // namespace nanscope
