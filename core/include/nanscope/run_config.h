#pragma once
// What a run is asked to do: the scenario or model file, its data, the device and the controls it
// starts with. Checked by invalidRunConfigReason() before any thread or tensor exists.
#include "nanscope/controls.h"
#include "nanscope/optimizer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nanscope {

// A further input of a model's forward after its data (forward(x, mask), forward(tokens, lengths)):
// synthetic, of a shape (the batch first) and a dtype, or read from a tensor file.
struct SideInput {
    std::vector<std::int64_t> shape;
    // float32: N(0, 1); int64: ids in [0, vocab) as for token ids; bool: all false (nothing masked,
    // in PyTorch's convention where true marks what to leave out).
    std::string dtype = "float32";
    std::string path;  // a tensor file: one row per sample, as the data's

    bool operator==(const SideInput &o) const { return shape == o.shape && dtype == o.dtype && path == o.path; }
};

// "float32", "int64", "bool": the dtypes a synthetic input can have.
bool isKnownInputDtype(const std::string &dtype);

// A transient hardware fault, injected for real (`--inject-fault bitflip@STEP:LAYER`): while step
// `step` computes, one exponent bit of the largest weight of `layer` (a module path) is flipped;
// it is restored before the update, as a flaky multiply would leave memory intact.
// In a data-parallel job (`bitflip@STEP:LAYER:RANK`) only `rank` flips, and the bit stays flipped
// after the step, as silent data corruption in one machine's memory would.
struct FaultInjection {
    int step = -1;
    std::string layer;
    int rank = -1;  // -1: not a job's
    bool active() const { return step >= 0; }
    bool operator==(const FaultInjection &o) const { return step == o.step && layer == o.layer && rank == o.rank; }
};

// A bad sample, injected (`--inject nan-sample@STEP`, in a job `nan-sample@RANK:STEP`): the batch
// that step `step` draws gets NaN as the first input value of its first sample, as a corrupt record
// in one shard would bring. Only `rank` draws it in a job (-1: not a job's). Floating-point inputs.
struct SampleInjection {
    int step = -1;
    int rank = -1;
    bool active() const { return step >= 0; }
    bool operator==(const SampleInjection &o) const { return step == o.step && rank == o.rank; }
};

// One rank of a data-parallel job (docs/ranks.md): `world` processes train one model on disjoint
// shards of the data and average their gradients; before the all-reduce they compare their maps,
// and a step where a rank went non-finite is skipped on every rank, or applied without that
// rank's gradients. world 0: not a job (a plain run).
enum class BadRankPolicy { Skip, Exclude };
// How the ranks exchange tensors: Gloo (host memory; CUDA tensors travel through host copies) or
// NCCL (GPU to GPU, one GPU per rank, where LibTorch has it). Auto: NCCL when every rank of a CUDA
// job has a GPU of its own and this NaNScope was built with NCCL, else Gloo.
enum class CollectiveBackend { Auto, Gloo, Nccl };
const char *collectiveBackendName(CollectiveBackend backend);  // "auto", "gloo", "nccl"
std::optional<CollectiveBackend> parseCollectiveBackend(const std::string &name);
struct DataParallel {
    int rank = 0;
    int world = 0;
    std::string address = "127.0.0.1";  // the rendezvous store, which rank 0 serves
    int port = 0;
    BadRankPolicy onBadRank = BadRankPolicy::Skip;
    int checkEvery = 10;      // steps between the ranks' comparisons of their parameters; 0: never
    int timeoutSeconds = 60;  // a collective that waits longer lost a rank
    CollectiveBackend backend = CollectiveBackend::Auto;
    // This rank's place among the ranks of its machine (torchrun's LOCAL_RANK): a CUDA rank trains
    // on GPU localRank (modulo the GPUs it sees). -1: not known, and GPU rank % GPUs.
    int localRank = -1;
    bool active() const { return world > 0; }
    bool operator==(const DataParallel &o) const
    {
        return rank == o.rank && world == o.world && address == o.address && port == o.port &&
               onBadRank == o.onBadRank && checkEvery == o.checkEvery && timeoutSeconds == o.timeoutSeconds &&
               backend == o.backend && localRank == o.localRank;
    }
};

struct RunConfig {
    std::string scenario = "large-lr-mse";
    int steps = 0;  // 0: the default of the scenario or model file (defaultSteps())
    std::uint64_t seed = 1;
    std::string device = "cpu";        // "cpu" or "cuda"
    std::optional<Controls> controls;  // empty: defaultControls()
    int batchSize = 0;                 // 0: the scenario's default
    std::optional<double> bnEps;       // bn-constant: BatchNorm eps (default 0, so the NaN shows)
    int snapshotEvery = 10;            // steps between snapshots of a checked-finite state
    int snapshotRing = 4;              // snapshots kept in memory
    bool opLevelOrigin = true;         // re-run the first non-finite step with op-level checks
    // Warn when a trend reaches its limit within this many steps (overflow, vanishing); 0: no
    // forecasts at all.
    int forecastHorizon = 50;
    // On the CPU, gather the map as a device does (statistics kept as tensors, read back once a
    // step) instead of scanning each tensor at once: runs the CUDA code path without a GPU.
    bool devicePathOnCpu = false;
    // Capsules (see capsule.h): of the first step that turns non-finite, and of these steps.
    bool capsuleOnFailure = true;
    std::vector<int> capsuleSteps;
    FaultInjection fault;
    SampleInjection nanSample;
    DataParallel parallel;
    // Another optimizer than the scenario's or model file's own, or other settings of it.
    OptimizerChoice optimizer;

    // A user's TorchScript file instead of a scenario (empty: the scenario runs).
    std::string modelPath;
    std::vector<std::int64_t> inputShape;  // synthetic inputs {8, 3, 64, 64}: the first is the batch
    // Synthetic inputs are float32 N(0, 1), or with tokenIds int64 ids in [0, vocab): vocab 0 takes
    // the first nn.Embedding's num_embeddings.
    bool tokenIds = false;
    std::int64_t vocab = 0;
    std::string inputsPath;  // or inputs from a file (Python torch.save or C++ torch::save): integer tensors
                             // (token ids) stay integers, any other becomes float32
    // Optional. When empty: for token ids in and [batch, seq, vocab] out, each position's next token
    // (the last ignored); otherwise random, of the output's shape.
    std::string targetsPath;
    // The forward's further inputs, in its order after the data. A data file holding a tuple, list
    // or dict of tensors (by argument name) fills these too.
    std::vector<SideInput> sideInputs;
    // Which output the loss is taken on, when forward returns a tuple, list or dict: a position or
    // a key; empty: the first tensor (depth first).
    std::string output;
    std::string loss = "cross-entropy";  // or "mse", or "model": the output is the model's own loss
    std::string savePath;                // where the trained model is written at the end of the run
    // A training loop another program trained and recorded (the Python recorder, nanscope.record):
    // its name, "train.py"; empty for a run NaNScope trains. Read from a run file, never run.
    std::string recordedLoop;

    bool usesModelFile() const { return !modelPath.empty(); }
    bool isRecordedLoop() const { return !recordedLoop.empty(); }
};

// What a run trains, as its summary's "source" says it: the recorded loop's name, the model
// file's path, or the scenario's id.
std::string runSource(const RunConfig &config);

// Steps a model file trains for when the configuration does not say.
constexpr int kModelFileDefaultSteps = 100;

// The one place defaults are decided: a scenario's own (see scenario.h), or those of a model file.
Controls defaultControls(const RunConfig &config);
int defaultSteps(const RunConfig &config);
// What the run really uses: the configuration's own value where it has one, else the default.
Controls initialControls(const RunConfig &config);
int stepsToRun(const RunConfig &config);

// The losses a model file can be trained with: "cross-entropy", "mse" and "model" (a scalar the
// model computes itself).
bool isKnownLoss(const std::string &name);

// Empty when `config` can start a run, else a one-line reason (unknown scenario or device,
// negative steps, invalid loss-scaling options). A RunSource's start() refuses what this refuses.
std::string invalidRunConfigReason(const RunConfig &config);

}  // namespace nanscope
