#pragma once
// The SQL side of a RunRecorder: each item it queued, written into an open run file. Called on the
// recorder's writer thread, inside the transaction of a batch; throws RunFileError.
#include "record/sqlite_db.h"
#include "record/step_columns.h"

#include "nanscope/capsule.h"
#include "nanscope/layer_detail_retention.h"
#include "nanscope/records.h"
#include "nanscope/run_config.h"
#include "nanscope/step_chunk.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace nanscope::record {

class RunWriter {
public:
    RunWriter(Database &db, KeepPolicy keep);
    ~RunWriter();
    RunWriter(const RunWriter &) = delete;
    RunWriter &operator=(const RunWriter &) = delete;

    void start(const std::vector<Layer> &layers, const RunConfig &config);  // the run row, the layers
    // The step's row, and the layer rows `keep` decides on (its own, its lead-up's).
    void step(const StepRecordPtr &record);
    // An event, and the layer rows it calls for (a warning's lead-up, a control change's).
    void event(const Event &event);
    void finish(const RunSummary &summary);  // also writes the last chunk, however short
    void heartbeat();                        // see RunFileInfo::heartbeat
    // The end of a batch's transaction: the chunk being filled is written with its steps so far,
    // so that a reader following the file finds the chunk of every step it reads (a thinned step's
    // layers are its chunk's), and a killed writer's last steps have theirs.
    void batchDone();
    // A capsule; a model run's first one also embeds the model file, so that the capsule replays
    // where the file is not.
    void capsule(const CapsuleBlob &capsule);

private:
    // Writes the layer rows of the steps kept; a step other than `inserted` gets its layer_detail.
    void keep(const std::vector<LayerDetailRetention::Decision> &decisions, const StepRecord *inserted);
    void writeLayers(const StepRecord &record);
    void stayWithinBudget();  // thins the sampled steps while the file holds more than the budget
    void chunkDone();         // chunk_ is complete

    Database &db_;
    std::unique_ptr<StepInsert> insertStep_;  // prepared once
    std::unique_ptr<Statement> insertLayer_, insertNonFinite_;
    std::int64_t layerCount_ = 0;                                            // the key of layer_steps
    std::vector<Layer> layers_;                                              // the summary names them
    std::string modelPath_;    // a model run's file, embedded with the first capsule
    std::string embeddedSha_;  // once embedded
    LayerDetailRetention retention_;
    std::unique_ptr<Statement> setDetail_;
    StepChunk chunk_;  // the steps of the current chunk so far: written at each batch's end, and whole
    int chunkStepsWritten_ = 0;  // of chunk_, by the last batchDone()
    StepChunk coarse_;  // the complete chunks of the current coarse chunk
};

}  // namespace nanscope::record
