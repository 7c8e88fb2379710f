#pragma once
// Decides, step by step, which steps' layer rows a run file keeps under a KeepPolicy. Steps
// arrive in order; a healthy step that is not decided at once (or is kept as a mere sample)
// waits in a ring of the last kLeadUpSteps steps, so that a non-finite step, a warning or a control change arriving later
// can still keep the steps that led up to it. A step that leaves the ring undecided keeps no
// layer rows. The writer asks, writes what it is told, and reports the file's size.
#include "nanscope/keep_policy.h"
#include "nanscope/records.h"

#include <deque>
#include <map>
#include <vector>

namespace nanscope {

class LayerDetailRetention {
public:
    struct Decision {
        StepRecordPtr record;
        LayerDetail detail;  // None: no layer rows for it
        // A sampled step already written with its layers, now kept for a cause: only its
        // layer_detail changes (a sample in a lead-up must not be thinned later).
        bool relabelOnly = false;
    };

    explicit LayerDetailRetention(KeepPolicy policy = {});

    // A step arrives. Returns, in step order, the waiting steps it keeps (its lead-up) and last
    // the step itself: its detail, None while it waits in the ring.
    std::vector<Decision> step(const StepRecordPtr &record);
    // An event at `step`: a warning or a first non-finite step keeps that step and its lead-up; a
    // control change keeps its lead-up and the kAfterControlSteps steps from it on. Returns the
    // waiting steps it keeps (a step still to come is kept when it arrives).
    std::vector<Decision> event(EventKind kind, int step);
    // A step kept for a cause of the writer's own (a capsule of it, which replay compares with
    // its layers), if it still waits; returns it.
    std::vector<Decision> keepStep(int step, LayerDetail detail);

    // Sampled healthy steps are kept every sampleEvery() steps; thin() doubles it (the writer then
    // drops the sampled steps off the new stride, those waiting in the ring too). Returns false
    // once it would exceed kMaxSampleEvery.
    int sampleEvery() const { return sampleEvery_; }
    bool thin();
    static constexpr int kMaxSampleEvery = 1 << 20;

    const KeepPolicy &policy() const { return policy_; }

private:
    LayerDetail causeOf(const StepRecord &record) const;
    std::vector<Decision> keepWaiting(int from, int to, LayerDetail detail);  // steps from..to in the ring

    KeepPolicy policy_;
    int sampleEvery_ = KeepPolicy::kSampleEvery;
    struct Waiting {
        StepRecordPtr record;
        bool sampled = false;  // written as a sample: a lead-up only relabels it
    };
    std::deque<Waiting> waiting_;  // the last kLeadUpSteps steps that are undecided or sampled
    std::map<int, LayerDetail> keepAt_;  // steps still to come kept for a warning or a capsule
    int controlUntil_ = -1;              // steps up to it are kept for a control change
    int controlFrom_ = 0;
};

// Whether the record holds a non-finite value anywhere: its origin, its input, its loss, or any
// layer's health of any kind (an overflow the loss scaler absorbed included).
bool holdsNonFinite(const StepRecord &record);

}  // namespace nanscope
