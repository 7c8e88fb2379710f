#pragma once
// What the window and the command line need from a run, wherever it comes from: a live Session
// today, a recorded run file or a replayed capsule next. Observers receive the run as it happens;
// commands steer it where the source can be steered (see capabilities()).
#include "nanscope/capsule.h"
#include "nanscope/controls.h"
#include "nanscope/records.h"
#include "nanscope/run_config.h"
#include "nanscope/step_chunk.h"

#include <cstddef>
#include <string>
#include <vector>

namespace nanscope {

enum class SessionState { Idle, Running, Paused, Finished, Failed };
const char *sessionStateName(SessionState s);

// Called on the source's own thread (a session's worker): implementations hand data over, they
// never block long. `run` is the id of the run that produced the data; ids only grow.
class RunObserver {
public:
    virtual ~RunObserver() = default;
    virtual void runStarted(int /*run*/, const std::vector<Layer> & /*layers*/, const RunConfig &) {}
    virtual void stepRecorded(const StepRecordPtr & /*record*/) {}
    // A recorded source may hand over a long run's earlier steps folded into chunks, before any
    // record of a later step: what a view that draws buckets needs, not every step (RecordedRun).
    virtual void stepsChunked(const StepChunkPtr & /*chunk*/) {}
    virtual void eventRaised(const Event & /*event*/) {}
    // A capsule of a step, taken before the step was applied (capsule.h).
    virtual void capsuleSaved(const CapsulePtr & /*capsule*/) {}
    virtual void stateChanged(SessionState /*state*/) {}
    virtual void runFinished(const RunSummary & /*summary*/) {}
    // Records handed over but not yet taken in (a window's queue). A source that can go faster
    // than its observers (a recorded run) waits while this is large; a live session never does.
    virtual std::size_t backlog() const { return 0; }
};

// What to do with a step that paused on a non-finite value (its update is not applied yet).
// Stop ends the run there, the update not applied.
enum class PausedStepDecision { Continue, SkipBatch, Retry, Stop };

// Which commands a source acts on. A recorded run, for one, is watched but never steered.
struct RunCapabilities {
    bool start = false;     // start() begins a new run from a RunConfig
    bool steer = false;     // pause, resume, step, stop, and decisions on a paused step
    bool controls = false;  // setControls() applies at the next step boundary
    bool rollback = false;  // requestRollback() restores a checked-finite snapshot
    bool capsules = false;  // requestCapsule() keeps a step's trainer state (the source computes steps)

    static RunCapabilities all() { return {true, true, true, true, true}; }
    static RunCapabilities none() { return {}; }
};

class RunSource {
public:
    virtual ~RunSource() = default;

    // Observers must outlive the source or be removed; they are called on the source's thread.
    virtual void addObserver(RunObserver *observer) = 0;
    virtual void removeObserver(RunObserver *observer) = 0;

    virtual RunCapabilities capabilities() const = 0;

    // Starts a new run (stopping any current one). Returns false with a one-line message when the
    // source cannot; errors found while building the run arrive in runFinished().
    virtual bool start(const RunConfig &config, std::string *error = nullptr) = 0;
    virtual void pause() = 0;
    virtual void resume() = 0;
    virtual void stepOnce(int count = 1) = 0;  // while paused: run `count` steps, then pause again
    virtual void stop() = 0;
    virtual void requestRollback() = 0;  // restore the newest checked-finite snapshot
    // Saves a capsule (capsule.h) of the paused step, or else of the next step computed; false
    // when this source computes no steps (capabilities().capsules is false).
    virtual bool requestCapsule() { return false; }
    virtual void decidePausedStep(PausedStepDecision decision) = 0;
    virtual void setControls(const Controls &controls) = 0;  // applied at the next step boundary

    // Whether a source that computes steps waits between two of them (paused, or with its steps
    // given out), every step it computed handed to the observers; a source that computes none
    // (a run file, pushed records) always is.
    virtual bool waitingAtStepBoundary() const { return true; }

    virtual Controls controls() const = 0;
    virtual SessionState state() const = 0;
    virtual int runId() const = 0;
    // Blocks until the current run has finished; false if it had not after `timeoutMs`.
    virtual bool wait(int timeoutMs = -1) = 0;
};

}  // namespace nanscope
