#pragma once
// What the ranks of a `--ranks` job print, gathered into one report as they print it. With --json,
// each rank's lines pass on as they come, each with its "rank". As text, the ranks' events come in
// step order across the ranks: an event of step s is held until every rank has recorded a later
// step (they train in lockstep), then the held ones go out by step, then rank; the job's verdict
// (job_verdict.h) and the summaries, by rank, close the report. With --json the verdict is the
// last line, one {"type":"job",...} object.
#include "job_verdict.h"

#include <climits>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace nanscope::cli {

class JobReport {
public:
    JobReport(int world, bool json, std::ostream &out);
    // One line of rank `rank`'s `run --json` output.
    void line(int rank, const std::string &text);
    // Rank `rank` printed its last line.
    void rankEnded(int rank);
    // Everything still held, in order.
    void finish();

private:
    struct Held {
        int step = 0;
        int rank = 0;
        std::string text;
    };
    void hold(int step, int rank, std::string text);
    void release(int belowStep);

    bool json_;
    std::ostream &out_;
    std::vector<int> recorded_;                           // each rank's newest step record; INT_MAX once it ended
    std::vector<Held> events_;                            // in arrival order
    std::vector<std::pair<int, std::string>> summaries_;  // (rank, line)
    JobVerdict verdict_;
    bool bench_ = false;  // a benchmark of the ranks, not a run: it has no verdict
};

}  // namespace nanscope::cli
