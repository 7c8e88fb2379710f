#pragma once
// A data-parallel job's run folder (docs/ranks.md): one run file per rank, rank-R.nsrun, as
// `run --ranks N --record FOLDER` writes it. The window, `report` and `replay` open it as one job.
#include <string>
#include <vector>

namespace nanscope {

struct JobRank {
    int rank = 0;
    std::string path;
};

// The folder's rank files, by rank. Throws RunFileError naming the folder when it holds none.
std::vector<JobRank> jobRunFiles(const std::string &folder);
// Of `ranks`, the one whose first non-finite step came first (by its capsule of that step), or the
// first when none failed or kept a capsule: what a job shows or replays first.
const JobRank &firstFailingRank(const std::vector<JobRank> &ranks);

}  // namespace nanscope
