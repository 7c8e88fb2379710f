#pragma once
// Requests to a Python loop that records into a run file (nanscope.record): appended as JSON lines
// to FILE.nsrun.steer, which the loop reads once a step and answers in the run file with an event
// naming the request (docs/run-file.md, "Steering a Python run"; python/nanscope/steering.py is
// the loop's end). `nanscope steer` and a window following the file both send them.
#include "nanscope/controls.h"
#include "nanscope/records.h"

#include <optional>
#include <string>

namespace nanscope {

struct RunFileInfo;

struct SteerRequest {
    std::optional<double> learningRate;
    bool setClip = false;
    std::optional<double> clip;  // with setClip: empty is "off"
    std::string policy;          // on_nonfinite: record, skip, rollback, raise, pause; empty: unchanged
    std::string decide;          // at a paused step: continue, skip, rollback, stop; empty: none
    // The step a change applies at: every rank of a data-parallel job alike (or it refuses it,
    // read too late); empty: the loop's next step.
    std::optional<int> atStep;
    bool empty() const { return !learningRate && !setClip && policy.empty() && decide.empty(); }
};

// The id of the run a Python loop records into `path`, for the loop to tell a request for it from
// one for a run that replaced it. Throws RunFileError, naming `path` and why, when no loop reads
// requests for it (a run NaNScope trains, a loop recorded with steer=False).
std::string steerableRunId(const RunFileInfo &info, const std::string &path);

// Appends `request` for run `runId` to path + ".steer" with one write; returns the request's id.
// Never creates the file (the loop does): throws RunFileError when it is not there.
std::string sendSteerRequest(const std::string &path, const std::string &runId, const SteerRequest &request);

// What an event of the run file says of request `id`.
enum class SteerAnswer { None, Applied, Decided, Refused };
SteerAnswer steerAnswer(const Event &event, const std::string &id);

// The on_nonfinite policy a window's controls ask of a Python loop: pause on a non-finite step
// wins; then the recovery policy (rollback, or skipping the batch; off: record).
std::string nonFinitePolicyFor(const Controls &controls);

}  // namespace nanscope
