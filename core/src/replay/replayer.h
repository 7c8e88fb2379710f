#pragma once
// A capsule's step computed again: the model rebuilt from the run file (the scenario, or the
// model file embedded in it), the trainer put back where the capsule was taken, and the step (or
// the steps since the capsule's snapshot) run with the changes a replay tries.
#include "nanscope/run_file.h"
#include "replay/batch_statistics.h"
#include "capsule/capsule_codec.h"

#include <memory>
#include <string>
#include <vector>

namespace nanscope {

class Replayer {
public:
    // Builds the model on `device`; `notes` gets what differs from where the capsule was taken.
    // Throws std::runtime_error with one line when the capsule cannot be replayed.
    Replayer(const RunFile &file, const CapsuleBlob &blob, const std::string &device, std::vector<EventMessage> &notes);
    ~Replayer();
    Replayer(const Replayer &) = delete;
    Replayer &operator=(const Replayer &) = delete;

    const Capsule &capsule() const { return capsule_; }
    const std::vector<Layer> &layers() const;

    // The capsule's step as it was taken, with other controls (a precision's own loss scale).
    StepState stateWith(const Controls &controls) const;
    // ... or on some rows of its batch.
    StepState stateWithRows(const std::vector<std::size_t> &rows) const;

    // The BatchNorm layers that couple the samples of the batch, their statistics measured on the
    // capsule's batch (`step`: its record). From now on computeStep() holds the finite ones, until
    // releaseBatchStatistics().
    const std::vector<BatchStatistic> &holdBatchStatistics(const StepRecord &step);
    void releaseBatchStatistics() { holding_ = false; }

    // The step computed from `state`, with the op-level re-run when it fails and `opLevel`.
    std::shared_ptr<StepRecord> computeStep(const StepState &state, bool opLevel);
    // Whether the step computed and applied from `state` leaves the run finite; `note` says
    // where it was not.
    bool finiteThroughStep(const StepState &state, EventMessage &note);
    // Whether the run, from the capsule's snapshot through its step with `controls`, stays finite.
    bool finiteFromSnapshot(const Controls &controls, EventMessage &note);

private:
    // A scenario's batches since the snapshot, from its data set rebuilt from the seed; without a
    // snapshot (and a note) where they are not what the run trained on.
    void regenerateWindow(const Dataset &data, std::vector<EventMessage> &notes);

    Capsule capsule_;
    std::string tempModel_;  // the embedded model file, written out for the loader
    std::unique_ptr<Trainer> trainer_;
    std::vector<BatchStatistic> statistics_;
    bool holding_ = false;
};

}  // namespace nanscope
