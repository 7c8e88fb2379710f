#pragma once
// A data-parallel job's run folder (docs/ranks.md): one run file per rank, rank-R.nsrun, as
// `run --ranks N --record FOLDER` writes it. The window, `report` and `replay` open it as one job.
#include "nanscope/records.h"

#include <string>
#include <vector>

namespace nanscope {

struct JobRank {
    int rank = 0;
    std::string path;
};

// The folder's rank files, by rank. Throws RunFileError naming the folder when it holds none.
std::vector<JobRank> jobRunFiles(const std::string &folder);
// Where a job went non-finite first: the rank (an index into the job's ranks) and the step, both
// -1 when no rank failed. By each rank's capsule of its first non-finite step, else by the summary
// of a finished file (a run without capsules); on one step, the lowest rank.
struct JobFailure {
    int rankIndex = -1;
    int step = -1;
};
JobFailure firstJobFailure(const std::vector<JobRank> &ranks);
// Of `ranks`, the one whose first non-finite step came first, or the first when none failed: what
// a job shows or replays first.
const JobRank &firstFailingRank(const std::vector<JobRank> &ranks);

// One rank's record of one step: null where its file does not hold that step (yet), with `error`
// where the file cannot be read.
struct RankStep {
    int rank = 0;
    StepRecordPtr record;
    std::string error;
};
// Every rank's record of `step`, in the order of `ranks`, with their layers (the first readable
// file's: the ranks train one model): the rank x layer view of a step.
struct JobStep {
    int step = -1;
    int lastStep = -1;  // the newest step any rank recorded
    std::vector<Layer> layers;
    std::vector<RankStep> ranks;
};
JobStep readJobStep(const std::vector<JobRank> &ranks, int step);

// The events a rank raises once the ranks compared their parameters: an Info event that starts
// with the first when they were identical, a Warning that contains the second for a rank whose
// parameters differ. Readers of a job (its verdict) find them by these words.
inline constexpr char kParametersIdentical[] = "parameters identical on all ";
inline constexpr char kParametersDiffer[] = "'s parameters differ from the other ranks'";

}  // namespace nanscope
