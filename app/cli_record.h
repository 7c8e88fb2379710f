#pragma once
// Run files on the command line: `run --record`, `report` and `export`.
#include "nanscope/keep_policy.h"
#include "nanscope/run_source.h"

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace nanscope {
class RunRecorder;
}

namespace nanscope::cli {

class Arguments;

struct RecordOptions {
    std::string path;                       // empty: the run is not recorded
    bool continueWithoutRecording = false;  // when writing fails: go on (true) or stop the run
    KeepPolicy keep;                        // --keep all|auto|SIZE: what the file keeps of each layer
    bool overwrite = false;                 // --overwrite: replace a file that is not a run file
};
void addRecordOptions(Arguments &arguments, RecordOptions &options);

// Starts recording into options.path, observing `source`; null when there is nothing to record.
// A failure to write later prints one line on `err` and stops the source unless the user asked to
// go on. Throws RunFileError when the file cannot be created.
std::unique_ptr<RunRecorder> startRecording(const RecordOptions &options, RunSource &source, std::ostream &err);

// A line on stderr at most once a second for a run that lasts: the step, the rate, the file.
class ProgressLine final : public RunObserver {
public:
    ProgressLine(std::ostream &err, std::string what);
    ~ProgressLine() override;
    void runStarted(int, const std::vector<Layer> &, const RunConfig &config) override;
    void stepRecorded(const StepRecordPtr &record) override;

private:
    struct Impl;
    std::unique_ptr<Impl> d_;
};

int reportCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);
int exportCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

}  // namespace nanscope::cli
