#pragma once
// The data contract between the core and its observers (GUI, command line, recorder).
// Plain values only: no LibTorch type appears here.
#include "nanscope/controls.h"
#include "nanscope/event_message.h"
#include "nanscope/health.h"
#include "nanscope/keep_policy.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nanscope {

struct Layer {
    int id = 0;
    std::string path;  // dotted, as named_modules() spells it; the root is ""
    std::string type;  // "Linear", "BatchNorm1d", ...
    int parent = -1;   // id of the enclosing layer, -1 for the root
};

enum class Phase { None, Input, Forward, Loss, Backward, Parameter, Update };
const char *phaseName(Phase p);               // "forward", as run files spell it; "none" for None
Phase phaseFromName(const std::string &name);  // the inverse; None for any other text

// Where a non-finite value was first born in a step.
struct Origin {
    int step = -1;
    Phase phase = Phase::None;
    int layer = -1;         // -1: no layer (the input batch, the loss)
    std::string layerPath;  // "" for the root or when there is no layer
    std::string op;         // "aten::log", "SqrtBackward0"; empty until the op-level tier ran
    std::string source;     // file:line when the model carries it
    bool produced = false;  // the layer's inputs were finite and its output was not
    // How the kind that escaped was made, with source lines: "-Inf from aten::masked_fill at
    // m.py:41 became NaN in aten::softmax at m.py:42". Models with a graph of their own code only.
    std::string chain;
    std::string explanation;  // one plain sentence
    // The layer's call that made it, 1-based, and its calls in the step, when the layer ran more
    // than once (a cell in a loop, a block on several inputs); 0 and 0 otherwise.
    int call = 0;
    int calls = 0;

    bool valid() const { return phase != Phase::None; }
};

struct LayerHealth {
    TensorHealth forward;     // the layer's output
    TensorHealth grad;        // the gradient flowing into that output in backward
    TensorHealth params;      // all of the layer's own parameters together
    TensorHealth paramGrads;  // their gradients
    bool inputFinite = true;  // the layer's input was all finite
    // |w after - w before| / |w before| over the layer's own parameters for the update this step
    // applied; NaN when none was applied (skipped, rolled back) or the layer has no parameters.
    double updateRatio = std::numeric_limits<double>::quiet_NaN();

    // The one definition of a non-finite layer in a step, used by the map, the tree, the step
    // table, the summary's per-layer counts and the command line: its output or the gradient
    // flowing into it held NaN or Inf. (Non-finite parameters show in the next forward output.)
    bool nonFinite() const { return forward.hasNonFinite() || grad.hasNonFinite(); }
};

enum class StepAction { None, Applied, QuarantinedSamples, ZeroedGradients, Skipped, RolledBack, Paused };

struct StepRecord {
    int run = 0;
    int step = 0;
    double loss = 0.0;
    double gradNorm = 0.0;         // before clipping
    double gradNormClipped = 0.0;  // after clipping (= gradNorm without clipping)
    double learningRate = 0.0;
    double lossScale = 1.0;    // this step's loss was multiplied by it (1: no loss scaling)
    bool lossScaling = false;  // a dynamic loss scaler was on (run files tell it by overflowLayers)
    Precision precision = Precision::FP32;  // the step ran in it (mixed precision may change live)
    bool skipped = false;      // the optimizer update was not applied
    bool rolledBack = false;
    std::string why;  // for a skip or a rollback
    double stepMillis = 0.0;

    TensorHealth inputHealth;
    std::vector<std::int64_t> badSamples;   // dataset indices of samples with non-finite inputs
    std::vector<std::int64_t> quarantined;  // samples removed from this batch by the policy
    TensorHealth lossHealth;
    std::vector<LayerHealth> layers;  // indexed by Layer::id
    // Read back from a run file: why it kept this step's layers; None: it kept none (the step's
    // chunk has them folded), and `layers` is empty. Every for a live record.
    LayerDetail layerDetail = LayerDetail::Every;
    Origin origin;                    // invalid when the step was finite
    bool zeroedGradients = false;
    // Layers whose parameter gradients held Inf/NaN on a step the loss scaler skipped (ids).
    std::vector<int> overflowLayers;

    bool nonFinite() const { return origin.valid(); }
    // Gradients that overflowed under a dynamic loss scaler, with the forward pass and the loss
    // finite: the scaler skips such a step and backs off, below 1 if it must. That is the scaler at
    // work, not a failure of the run: such a step is not the run's first non-finite step or origin
    // and does not pause the run, though its values show in the map and its skip in the log. Once
    // the scale itself is below fp16's smallest value (2^-24) the scaler has nothing left to give.
    bool scalerAbsorbs() const
    {
        return origin.phase == Phase::Backward && (lossScaling || !overflowLayers.empty()) && lossScale >= 0x1p-24;
    }
    // Non-finite values the loss scaler cannot absorb: what the run's first non-finite step,
    // origin and pause-on-non-finite are about.
    bool failed() const { return nonFinite() && !scalerAbsorbs(); }
    // The layer this step's non-finite value was born in (forward or backward), or -1: none, the
    // input or the loss, weights an earlier update made non-finite, or an absorbed overflow.
    int bornInLayer() const
    {
        return failed() && origin.produced && (origin.phase == Phase::Forward || origin.phase == Phase::Backward)
                   ? origin.layer
                   : -1;
    }
};
using StepRecordPtr = std::shared_ptr<const StepRecord>;

// Warning: a value heading for the precision's largest value (an overflow forecast).
enum class EventKind { Info, FirstNonFinite, Recovery, Rollback, ControlChange, Paused, Error, Warning };
// "info", "first-nonfinite", "recovery", "rollback", "control-change", "paused", "error",
// "warning": as run files and `run --json` spell them.
const char *eventKindId(EventKind kind);
EventKind eventKindFromId(const std::string &id);  // Info for an id it does not know

// One control the user changed, as text: "lr", "0.1", "0.01". A ControlChange event carries one
// for each control that changed at that step boundary; its text says them all in one line.
struct ControlChange {
    std::string control;  // lr, clip, recovery, pause, precision, loss-scaling, fix
    std::string before;
    std::string after;
};

struct Event {
    Event() = default;
    Event(EventKind kind, int step, int layer, std::string text)
        : kind(kind), step(step), layer(layer), text(std::move(text))
    {
    }
    // An event that says one of the core's sentences: `text` is its English.
    Event(EventKind kind, int step, int layer, EventMessage message)
        : kind(kind), step(step), layer(layer), text(composeEventText(message)), message(std::move(message))
    {
    }

    EventKind kind = EventKind::Info;
    int step = -1;
    int layer = -1;
    std::string text;
    int run = 0;                         // stamped by the source: events of a replaced run are dropped like its records
    Origin origin;                       // FirstNonFinite and Paused: where the value was born (the step's record of a
                                         // paused step is published only once the step is decided)
    std::vector<ControlChange> changes;  // ControlChange: what changed
    EventMessage message;                // the sentence `text` says, for a reader to compose in its language
};

// Whether a scenario's run met its challenge (nanscope/challenge.h), decided when the run ends.
struct ChallengeResult {
    std::string id;    // the scenario's id
    std::string goal;  // one sentence, in English
    bool met = false;
};

struct RunSummary {
    int run = 0;
    std::string source;  // the scenario's id, or the model file's path
    int stepsRun = 0;
    int firstNonFiniteStep = -1;
    Origin origin;  // of the first non-finite step
    int nonFiniteSteps = 0;
    std::vector<std::int64_t> quarantinedSamples;
    int rollbacks = 0;
    int skippedSteps = 0;         // updates not applied (loss scaler, paused-and-skipped, rollback)
    int scalerSkippedSteps = 0;   // of those, skipped by the loss scaler for overflowing gradients
    double finalLossScale = 1.0;  // the scale the next step would use (1: no loss scaling)
    std::string precision;        // label at the end of the run: "fp32", "fp16 (emulated on CPU)"
    std::string optimizer;        // "sgd, momentum 0.9" (empty when a run file did not say)
    double finalLearningRate = 0.0;
    double stepsPerSecond = 0.0;
    bool stoppedByPolicy = false;
    std::string error;  // non-empty when the run ended on an error
    // Per layer: the number of steps in which its output or gradient held a non-finite value.
    std::vector<int> nonFiniteStepsPerLayer;
    bool finalStateFinite = true;  // parameters and buffers at the end of the run
    // False for a recorded run whose writer never finished it (killed, crashed): the summary
    // then covers the steps the file holds.
    bool finished = true;
    // A scenario's run: its challenge and whether this run met it. Empty for any other run.
    std::optional<ChallengeResult> challenge;
};

}  // namespace nanscope
