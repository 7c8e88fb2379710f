#pragma once
// Records one run into a run file (see run_file.h). An observer of a RunSource that never holds
// up the training thread: it queues what it is handed, and a writer thread of its own commits it
// in batched transactions at least every `commitIntervalMs`, so a process killed at any moment
// leaves a file holding every step up to about then.
#include "nanscope/keep_policy.h"
#include "nanscope/run_source.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace nanscope {

struct RecorderOptions {
    int commitIntervalMs = 250;
    // What the file keeps of each layer's health (docs/run-file.md, "Layer detail"); `auto` by default.
    KeepPolicy keep;
    // Called once, on the writer thread, when writing fails (a full disk, a vanished folder):
    // the message names the file and the cause. Nothing is written after it.
    std::function<void(const std::string &message)> onError;
    // Replace a file that is not a run file (or one of a newer format). Off, such a file is
    // refused: a typo in a path must not destroy a script or a checkpoint.
    bool overwrite = false;
};

class RunRecorder final : public RunObserver {
public:
    // Creates `path` with its schema, beside it first and then renamed over it, replacing a run
    // file already there (any file with `overwrite`). Throws RunFileError at once when it cannot
    // (an unwritable folder, a full disk, a file that is not a run file).
    explicit RunRecorder(const std::string &path, RecorderOptions options = {});
    ~RunRecorder() override;  // close()
    RunRecorder(const RunRecorder &) = delete;
    RunRecorder &operator=(const RunRecorder &) = delete;

    // The recorder keeps the first run it sees; data of any other run id is ignored.
    void runStarted(int run, const std::vector<Layer> &layers, const RunConfig &config) override;
    void stepRecorded(const StepRecordPtr &record) override;
    void eventRaised(const Event &event) override;
    void capsuleSaved(const CapsulePtr &capsule) override;
    void runFinished(const RunSummary &summary) override;

    // Writes what is queued, waits for it to be committed; the file is then complete.
    void flush();
    // flush(), then stops the writer and closes the file (a finished run leaves one file, no
    // write-ahead log). Idempotent.
    void close();

    const std::string &path() const;
    std::string error() const;  // the first write error, empty while none
    std::int64_t stepsWritten() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d_;
};

// The SHA-256 of a file as 64 hex digits; empty when it cannot be read.
std::string fileSha256(const std::string &path);

}  // namespace nanscope
