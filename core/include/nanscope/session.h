#pragma once
// A training session on one worker thread. The GUI and the command line are two observers of it;
// everything either can do goes through this facade. No LibTorch header is included here.
#include "nanscope/controls.h"
#include "nanscope/records.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nanscope {

enum class SessionState { Idle, Running, Paused, Finished, Failed };
const char *sessionStateName(SessionState s);

struct RunConfig {
    std::string scenario = "large-lr-mse";
    int steps = 0;                  // 0: the scenario's default
    std::uint64_t seed = 1;
    std::string device = "cpu";     // "cpu" or "cuda"
    std::optional<Controls> controls;  // empty: the scenario's defaults
    int batchSize = 0;              // 0: the scenario's default
    std::optional<double> bnEps;    // bn-constant: BatchNorm eps (default 0, so the NaN shows)
    int snapshotEvery = 10;         // steps between snapshots of a checked-finite state
    int snapshotRing = 4;           // snapshots kept in memory
    bool opLevelOrigin = true;      // re-run the first non-finite step with op-level checks
    // On the CPU, gather the map as a device does (statistics kept as tensors, read back once a
    // step) instead of scanning each tensor at once: runs the CUDA code path without a GPU.
    bool devicePathOnCpu = false;

    // A user's TorchScript file instead of a scenario (empty: the scenario runs).
    std::string modelPath;
    std::vector<std::int64_t> inputShape;  // synthetic inputs {8, 3, 64, 64}: the first is the batch
    std::string inputsPath;   // or inputs from a file (Python torch.save or C++ torch::save)
    std::string targetsPath;  // optional: inferred from the output's shape when empty
    std::string loss = "cross-entropy";  // or "mse"
    std::string savePath;     // where the trained model is written at the end of the run
};

// The losses a model file can be trained with: "cross-entropy" and "mse".
bool isKnownLoss(const std::string &name);

// Empty when `config` can start a run, else a one-line reason (unknown scenario or device,
// negative steps, invalid loss-scaling options). Session::start() refuses what this refuses.
std::string invalidRunConfigReason(const RunConfig &config);

// Called on the session's worker thread: implementations hand data over, they never block long.
class SessionObserver {
public:
    virtual ~SessionObserver() = default;
    virtual void runStarted(int /*run*/, const std::vector<Layer> & /*layers*/, const RunConfig &) {}
    virtual void stepRecorded(const StepRecordPtr & /*record*/) {}
    virtual void eventRaised(const Event & /*event*/) {}
    virtual void stateChanged(SessionState /*state*/) {}
    virtual void runFinished(const RunSummary & /*summary*/) {}
};

// What to do with a step that paused on a non-finite value (its update is not applied yet).
enum class PausedStepDecision { Continue, SkipBatch, Retry };

class Session {
public:
    Session();
    ~Session();  // stops the worker and joins it
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;

    // Observers must outlive the session or be removed; they are called on the worker thread.
    void addObserver(SessionObserver *observer);
    void removeObserver(SessionObserver *observer);

    // Starts a new run (stopping any current one). Returns false with a message when the
    // configuration is invalid; errors found while building the run arrive in runFinished().
    bool start(const RunConfig &config, std::string *error = nullptr);
    void pause();
    void resume();
    void stepOnce(int count = 1);  // while paused: run `count` steps, then pause again
    void stop();
    void requestRollback();        // restore the newest checked-finite snapshot at the next step
    void decidePausedStep(PausedStepDecision decision);
    void setControls(const Controls &controls);  // applied at the next step boundary

    Controls controls() const;
    SessionState state() const;
    int runId() const;
    // Blocks until the current run has finished; false if it had not after `timeoutMs`.
    bool wait(int timeoutMs = -1);

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

}  // namespace nanscope
