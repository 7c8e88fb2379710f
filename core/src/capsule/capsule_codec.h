#pragma once
// A capsule in memory (the trainer's state before a step, and from the newest checked-finite
// snapshot the batches that led to it) and its serialized form (nanscope/capsule.h).
#include "nanscope/capsule.h"
#include "nanscope/version.h"
#include "training/snapshot.h"
#include "training/trainer.h"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nanscope {

class CapsuleError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Capsule {
    std::string reason;
    StepState state;
    std::optional<Snapshot> snapshot;
    std::vector<TrainingBatch> window;  // from the snapshot's step up to (not including) the capsule's
    // A scenario's window keeps only dataset indices: its data is regenerated from the seed, and
    // checked against these hashes of what the run trained on (dataHash()).
    bool windowFromSeed = false;
    std::vector<std::uint64_t> windowHashes;
    // Where it was taken.
    std::string device = "cpu";
    int threads = 1;
    std::string precision;  // the label, "fp16 (emulated on CPU)"
    std::string libtorchVersion;
    std::uint64_t seed = 0;
};

// The capsule of the step `trainer` just computed (between computeStep() and applyStep()).
Capsule captureCapsule(const Trainer &trainer, const StepRecord &record, const RunConfig &config,
                       const std::string &reason);

// FNV-1a over a batch's inputs, targets and further inputs: the same on every machine.
std::uint64_t dataHash(const TrainingBatch &batch);

CapsuleBlob encodeCapsule(const Capsule &capsule, int run);
// Throws CapsuleError for a blob that does not decode (damaged, or of another format).
Capsule decodeCapsule(const CapsuleBlob &blob);

}  // namespace nanscope
