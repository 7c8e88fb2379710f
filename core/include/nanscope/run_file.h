#pragma once
// A run file (.nsrun): one run recorded by RunRecorder into SQLite, read back by RunFile. The
// schema is documented in docs/run-file.md; anyone can query it without NaNScope.
#include "nanscope/records.h"
#include "nanscope/run_config.h"
#include "nanscope/step_chunk.h"

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nanscope {

// The format this NaNScope writes, and the newest it reads; it reads every earlier one too.
// 2: steps.precision, the summary's per-layer counts by path; 3: steps.layer_detail and run.keep,
// a file that keeps some steps' layer rows only (docs/run-file.md, "Versioning"); 4:
// steps.origin_call and origin_calls (the call of a layer that ran several times).
constexpr int kRunFileFormatVersion = 4;
constexpr const char *kRunFileExtension = ".nsrun";

// One line naming the file and the cause: "run.nsrun: not a NaNScope run file".
class RunFileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The `run` row: who wrote the file, what ran, and the summary once the run finished.
struct RunFileInfo {
    int formatVersion = 0;
    std::string nanscopeVersion;
    std::string libtorchVersion;
    std::string created;   // ISO 8601, UTC
    std::string scenario;  // empty for a model run
    std::string modelPath;
    std::string modelSha256;
    std::string device;
    std::string precision;
    std::uint64_t seed = 0;
    RunConfig config;  // with its initial controls
    std::string configText;  // the config as the file holds it (JSON), with keys RunConfig does not read
    // A data-parallel job's rank and its number of ranks (docs/ranks.md); worldSize 0: a run of its own.
    int rank = 0;
    int worldSize = 0;
    // What the file keeps of each layer's health (docs/run-file.md, "Layer detail"): every step in
    // files before version 3, else as written, with the stride its sampled steps have now.
    KeepPolicy keep = KeepPolicy::all();
    int keepSampleEvery = 1;
    bool finished = false;
    RunSummary summary;  // meaningful when finished
    // Goes up about once a second while a recorder writes the file: a follower that sees it stand
    // still for long knows the writer is gone (killed, crashed) rather than quiet (paused).
    std::int64_t heartbeat = 0;
};

struct RunFileStats {
    std::int64_t steps = 0;
    int firstStep = -1;
    int lastStep = -1;
    int layers = 0;
    std::int64_t fileBytes = 0;  // the database and its write-ahead log
    // Bytes on disk per layer per step: the file's size over steps x layers.
    double bytesPerLayerStep() const;
};

// A run file opened read-only and defensively: reading never writes to it, never loads an
// extension and never trusts its schema. A file that another process is still writing can be
// read; refresh() sees what it committed since. Not thread-safe: one reader per thread.
class RunFile {
public:
    // Throws RunFileError when the file is missing, not a run file, damaged, locked or of a
    // newer format.
    explicit RunFile(const std::string &path);
    ~RunFile();
    RunFile(const RunFile &) = delete;
    RunFile &operator=(const RunFile &) = delete;

    const std::string &path() const;
    const RunFileInfo &info() const;
    const std::vector<Layer> &layers() const;

    // Re-reads the run row (a writer may have finished since). Throws RunFileError.
    void refresh();
    RunFileStats stats() const;

    // Up to `maxCount` steps after `afterStep`, in order, stamped with run id `run`; without
    // `withLayers`, their per-layer health is left empty (cheaper for a CSV of steps).
    std::vector<StepRecordPtr> readSteps(int afterStep, int maxCount, bool withLayers = true, int run = 0) const;
    // The newest step the file holds, -1 when none: cheap, unlike stats().
    int lastStep() const;
    // The chunks numbered after `afterChunk` and before `beforeChunk` (see StepChunk), in order, at
    // most `maxCount`, stamped with run id `run`: a summary of their steps for views that draw buckets. None in a file
    // whose writer had not yet finished a chunk, or written before chunks existed.
    std::vector<StepChunkPtr> readChunks(int afterChunk, int beforeChunk, int maxCount, int run = 0) const;
    // The same for coarse chunks (kCoarseChunkSteps steps each), numbered by coarse chunk: none in
    // files before version 3 or from writers that keep none.
    std::vector<StepChunkPtr> readCoarseChunks(int afterCoarse, int beforeCoarse, int maxCount, int run = 0) const;
    // Events after the one with id `afterId` (0: from the first), in order; `lastId` gets the
    // newest id read.
    std::vector<Event> readEvents(std::int64_t afterId, std::int64_t *lastId = nullptr) const;

private:
    struct Impl;
    std::unique_ptr<Impl> d_;
};

// A step the file kept no layer detail of (LayerDetail::None) with its chunk's layers
// (layersFromChunk) in their place, for views that draw every step; `record` itself when it has
// its own layers or its chunk is not written yet. `cache` keeps the chunk last read.
StepRecordPtr withChunkLayers(const RunFile &file, const StepRecordPtr &record, StepChunkPtr *cache = nullptr);

// Writes the run as CSV: one row a step, or with `layers` one row a step, layer and kind of
// health. Returns the steps written. Throws RunFileError when the file cannot be read.
std::int64_t writeRunCsv(const RunFile &file, std::ostream &out, bool layers = false);

// Writes a consistent, self-contained copy of run file `from` to `to` (replacing it), even while
// another process writes `from`: what was committed when the copy began. Throws RunFileError.
void copyRunFile(const std::string &from, const std::string &to);

}  // namespace nanscope
