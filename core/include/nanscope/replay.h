#pragma once
// `nanscope replay`: a step computed again from its capsule (capsule.h), on this machine, and what
// that tells: whether the failure is deterministic, where at op level it was born, which samples
// of the batch cause it and which change would have kept the run finite.
#include "nanscope/event_message.h"
#include "nanscope/records.h"

#include <atomic>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nanscope {

enum class ReplayVerdict {
    Reproduced,             // bit-identical: loss, gradient norm and every layer's health
    ReproducedNumerically,  // the same non-finite pattern, values within the stated tolerance
    NotReproduced,          // anything else: finite this time, or another failure
};
// "reproduced", "reproduced-numerically", "not-reproduced"
const char *replayVerdictId(ReplayVerdict v);

struct WhatIf {
    std::string change;   // "precision=bf16", "lr=0.05", "clip=1", "without samples 10 50"
    std::string from;     // "step": the failing step alone; "snapshot": from the last checked-finite state
    bool finite = false;  // the run stays finite through the failing step
    std::string note;     // where it failed instead ("non-finite at step 6"), or why it was not tried
    EventMessage noteMessage;  // the note as a sentence (event_message.h); empty for an error's own text
};

struct ReplayOptions {
    int step = -1;               // -1: the first non-finite step's capsule, else the first capsule
    std::string device = "cpu";  // a CUDA capsule on a machine without CUDA replays on the CPU, saying so
    int threads = 0;             // 0: as recorded
    bool samples = true;         // bisect the batch
    bool whatIf = true;          // try the changes
    // Called from the replaying thread before each phase ("bisecting the batch: 3 replays").
    std::function<void(const std::string &)> progress;
    // Set from another thread to stop between two computations: replayCapsule() then throws
    // ReplayCancelled.
    const std::atomic<bool> *cancel = nullptr;
};

struct ReplayCancelled : std::runtime_error {
    ReplayCancelled() : std::runtime_error("the replay was cancelled") {}
};

struct ReplayReport {
    std::string runFile;
    int step = -1;
    std::string reason;  // why the capsule was taken
    ReplayVerdict verdict = ReplayVerdict::NotReproduced;
    double tolerance = 0;  // relative, for reproduced-numerically
    bool recordedFailed = false;
    bool replayedFailed = false;
    int differsAt = -1;  // the first layer whose map differs from the recorded one, -1: none
    std::string differsAtPath;
    std::string differsWhat;  // "forward max 4.1e+37 recorded, 2.3 now"
    double recordedLoss = 0, replayedLoss = 0;
    double recordedGradNorm = 0, replayedGradNorm = 0;
    Origin origin;  // of the replayed step, at op level when it failed
    // The smallest set of samples (dataset indices) that still makes the step fail, and any others
    // found the same way in the rest of the batch; empty when the step does not fail.
    std::vector<std::int64_t> samples;
    int bisectReplays = 0;
    std::vector<std::string> coupledBy;  // BatchNorm layers that couple the samples of a batch
    std::vector<WhatIf> whatIf;
    std::vector<std::string> notes;  // another LibTorch, CPU instead of CUDA, other threads
    std::vector<EventMessage> noteMessages;  // the same notes as sentences, for a reader's language
    std::string device;
    int threads = 1;
    double loadMillis = 0;    // reading the capsule and building the model
    double replayMillis = 0;  // the step computed again
    double totalMillis = 0;
};

// Throws RunFileError for an unreadable file or a step without capsule, std::runtime_error (one
// line) for a capsule that cannot be replayed here. A run recorded by nanscope.record (Python)
// gives the replay stored in its capsule (storedReplay).
ReplayReport replayCapsule(const std::string &runFile, const ReplayOptions &options = {});

// The replay nanscope.replay (Python) stored in the capsule of `step` (-1: the first non-finite
// step's, else the first) of a run recorded by nanscope.record; std::nullopt for a run NaNScope
// trained itself. Throws RunFileError when there is no capsule, or it has not been replayed yet
// (saying how to: that needs the loop's own model code).
std::optional<ReplayReport> storedReplay(const std::string &runFile, int step);

}  // namespace nanscope
