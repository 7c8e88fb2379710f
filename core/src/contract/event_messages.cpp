// The sentences the core's events say (nanscope/event_message.h), defined once. The patterns are
// marked for the window's translation (contract/translatable.h). A pattern names its arguments
// %1 to %9 and may leave one out; the window substitutes a translated pattern the same way.
#include "nanscope/event_message.h"

#include "contract/translatable.h"

#include <cstring>

namespace nanscope {

namespace {

struct Pattern {
    const char *id;
    const char *english;
};

const Pattern kPatterns[] = {
    {"run-started", QT_TRANSLATE_NOOP("nanscope::core", "run %1: %2 on %3, %4, %5")},
    {"batch-skipped", QT_TRANSLATE_NOOP("nanscope::core", "batch skipped")},
    {"retrying", QT_TRANSLATE_NOOP("nanscope::core", "retrying the step")},
    {"quarantined", QT_TRANSLATE_NOOP("nanscope::core", "quarantined samples %1")},
    {"grads-zeroed", QT_TRANSLATE_NOOP("nanscope::core", "non-finite gradient entries set to 0")},
    {"restored", QT_TRANSLATE_NOOP("nanscope::core", "restored the state of step %1 (parameters, buffers, optimizer)")},
    {"restored-lr-halved",
     QT_TRANSLATE_NOOP(
         "nanscope::core",
         "non-finite loss: restored the state of step %1 (parameters, buffers, optimizer), lr halved to %2")},
    {"no-snapshot", QT_TRANSLATE_NOOP("nanscope::core", "no checked-finite snapshot to restore")},
    {"no-snapshot-skipped",
     QT_TRANSLATE_NOOP("nanscope::core", "non-finite loss and no checked-finite snapshot: update skipped")},
    {"capsule", QT_TRANSLATE_NOOP("nanscope::core", "capsule of step %1 (%2): %3 KiB")},
    {"capsule-with-snapshot",
     QT_TRANSLATE_NOOP(
         "nanscope::core",
         "capsule of step %1 (%2): %3 KiB, with the checked-finite state of step %4 and the batches since")},
    {"capsule-beside",
     QT_TRANSLATE_NOOP("nanscope::core",
                       "capsule of step %1 (%2): %3 KiB, too large for the run file: written beside it as %4 "
                       "(keep the two together)")},
    {"model-saved", QT_TRANSLATE_NOOP("nanscope::core", "saved the model to %1")},
    // Forecasts: what grows or shrinks (a layer's output, the gradient into a layer, the loss) and
    // in how many steps, "1 step" apart from the others.
    {"overflow-output",
     QT_TRANSLATE_NOOP("nanscope::core", "%1 output grows x%2 a step: %3 overflow in about %4 steps")},
    {"overflow-output-1",
     QT_TRANSLATE_NOOP("nanscope::core", "%1 output grows x%2 a step: %3 overflow in about 1 step")},
    {"overflow-loss", QT_TRANSLATE_NOOP("nanscope::core", "the loss grows x%2 a step: %3 overflow in about %4 steps")},
    {"overflow-loss-1", QT_TRANSLATE_NOOP("nanscope::core", "the loss grows x%2 a step: %3 overflow in about 1 step")},
    {"vanishing-output",
     QT_TRANSLATE_NOOP(
         "nanscope::core",
         "%1 output shrinks x%2 a step: below %3's smallest value (%4) it rounds to 0 in about %5 steps")},
    {"vanishing-output-1",
     QT_TRANSLATE_NOOP("nanscope::core",
                       "%1 output shrinks x%2 a step: below %3's smallest value (%4) it rounds to 0 in about 1 step")},
    {"vanishing-gradient",
     QT_TRANSLATE_NOOP("nanscope::core", "the gradient into %1 shrinks x%2 a step: below %3's smallest value (%4) it "
                                         "rounds to 0 in about %5 steps")},
    {"vanishing-gradient-1",
     QT_TRANSLATE_NOOP("nanscope::core", "the gradient into %1 shrinks x%2 a step: below %3's smallest value (%4) it "
                                         "rounds to 0 in about 1 step")},
    {"updates-large",
     QT_TRANSLATE_NOOP("nanscope::core",
                       "%1 weights move by %2 times their size a step (%3 steps running; usual: 1e-4 to 1e-2): updates "
                       "this large diverge, lower the learning rate")},
    {"updates-tiny",
     QT_TRANSLATE_NOOP("nanscope::core",
                       "%1 weights barely move: |dw| / |w| is %2 (%3 steps running; usual: 1e-4 to 1e-2): updates this "
                       "small are lost to rounding, raise the learning rate")},
    {"loss-scale-falling",
     QT_TRANSLATE_NOOP("nanscope::core",
                       "the loss scale fell to %1 and keeps falling: gradients overflow fp16 even unscaled, and the "
                       "scaler has nothing left to give")},
    {"loss-scale-grew", QT_TRANSLATE_NOOP("nanscope::core", "loss scale grew to %1 after %2 clean steps")},
    {"scaler-skipped",
     QT_TRANSLATE_NOOP("nanscope::core", "%1 gradients overflowed at loss scale %2: update skipped, scale now %3")},
    // The ranks of a data-parallel job. The English of the last two is what job reports look for
    // (kParametersIdentical, kParametersDiffer in nanscope/job_folder.h).
    {"rank-joining", QT_TRANSLATE_NOOP("nanscope::core", "rank %1 of %2: joining the job at %3:%4")},
    {"rank-collectives", QT_TRANSLATE_NOOP("nanscope::core", "rank %1: collectives over %2")},
    {"ranks-skipped",
     QT_TRANSLATE_NOOP("nanscope::core", "non-finite before the all-reduce on %1: step skipped on every rank")},
    {"ranks-excluded",
     QT_TRANSLATE_NOOP("nanscope::core", "non-finite before the all-reduce on %1: applied without its gradients, "
                                         "averaged over the other ranks")},
    {"ranks-identical", QT_TRANSLATE_NOOP("nanscope::core", "parameters identical on all %1 ranks")},
    {"rank-diverged",
     QT_TRANSLATE_NOOP("nanscope::core", "rank %1's parameters differ from the other ranks' from %2 on: silent "
                                         "divergence, the signature of a hardware fault")},
    // Replay's notes and what-ifs (nanscope/replay.h).
    {"replay-held",
     QT_TRANSLATE_NOOP("nanscope::core",
                       "%1 couple the samples of a batch: bisected with their batch statistics held as recorded")},
    {"replay-unheld",
     QT_TRANSLATE_NOOP("nanscope::core", "%1: the recorded batch statistics are non-finite (the bad samples reached "
                                         "them), so they cannot be held; each subset is normalised by its own")},
    {"replay-any-sample",
     QT_TRANSLATE_NOOP("nanscope::core", "no particular samples: the step fails on any of them alone (%1 replays)")},
    {"replay-together",
     QT_TRANSLATE_NOOP("nanscope::core",
                       "the samples %1 fail only together: neither half of them makes the step non-finite alone")},
    {"replay-no-snapshot",
     QT_TRANSLATE_NOOP(
         "nanscope::core",
         "the capsule holds no checked-finite state before the step: no change was tried from a snapshot")},
    {"replay-no-cuda", QT_TRANSLATE_NOOP("nanscope::core", "this machine has no CUDA device: replayed on the CPU")},
    {"replay-threads", QT_TRANSLATE_NOOP("nanscope::core", "replayed with %1 threads; recorded with %2")},
    {"replay-device", QT_TRANSLATE_NOOP("nanscope::core", "recorded on %1, replayed on %2")},
    {"replay-libtorch",
     QT_TRANSLATE_NOOP("nanscope::core", "recorded with LibTorch %1, replayed with %2: kernels may round differently")},
    {"replay-data-differs",
     QT_TRANSLATE_NOOP("nanscope::core", "the scenario's data regenerated from the seed differs from what step %1 "
                                         "trained on: no change is tried from the snapshot")},
    {"whatif-nonfinite-in", QT_TRANSLATE_NOOP("nanscope::core", "non-finite in %1")},
    {"whatif-nonfinite-in-layer", QT_TRANSLATE_NOOP("nanscope::core", "non-finite in %1 of %2")},
    {"whatif-update-nonfinite", QT_TRANSLATE_NOOP("nanscope::core", "the update made the parameters non-finite")},
    {"whatif-no-snapshot",
     QT_TRANSLATE_NOOP("nanscope::core", "the capsule holds no checked-finite state before the step")},
    {"whatif-nonfinite-at", QT_TRANSLATE_NOOP("nanscope::core", "non-finite at step %1")},
    {"whatif-last-update-nonfinite",
     QT_TRANSLATE_NOOP("nanscope::core", "the last update made the parameters non-finite")},
    // The Python recorder's own events (python/nanscope reads these patterns from format.json).
    {"python-recording",
     QT_TRANSLATE_NOOP("nanscope::core", "recording %1: a Python training loop on %2, torch %3, %4")},
    {"not-measured-scripted",
     QT_TRANSLATE_NOOP("nanscope::core", "not measured: %1: a TorchScript module takes no Python hooks: its calls' "
                                         "outputs and gradients are not measured (its parameters and their gradients "
                                         "are)")},
    {"not-measured-calls", QT_TRANSLATE_NOOP("nanscope::core", "not measured: %1: its calls are not measured (%2)")},
    {"not-measured-layout",
     QT_TRANSLATE_NOOP("nanscope::core", "not measured: a tensor of this step: its layout %1 has no reductions")},
    {"update-not-called", QT_TRANSLATE_NOOP("nanscope::core", "optimizer.step() was not called in this step")},
    {"scaler-skipped-update",
     QT_TRANSLATE_NOOP("nanscope::core", "the loss scaler skipped the update: the gradients overflowed")},
    {"guard-skipped",
     QT_TRANSLATE_NOOP("nanscope::core", "non-finite gradients: the update was skipped and the gradients zeroed")},
    {"guard-raised", QT_TRANSLATE_NOOP("nanscope::core",
                                       "non-finite gradients: the update was stopped and the loop raised NonFiniteError")},
    {"guard-restored", QT_TRANSLATE_NOOP("nanscope::core", "non-finite gradients: restored the state of step %1 "
                                                           "(parameters, buffers, optimizer), lr halved to %2")},
    {"guard-no-snapshot",
     QT_TRANSLATE_NOOP("nanscope::core", "non-finite gradients and no checked-finite state kept yet: update skipped")},
    {"guard-stopped",
     QT_TRANSLATE_NOOP("nanscope::core", "non-finite gradients: the update was stopped and the loop told to stop")},
    {"paused-python", QT_TRANSLATE_NOOP("nanscope::core", "paused before the update of step %1: non-finite gradients; "
                                                          "waiting up to %2 s for a decision (continue, skip, "
                                                          "rollback, stop)")},
    {"pause-decided", QT_TRANSLATE_NOOP("nanscope::core", "decided: %1, after %2 s (request %3)")},
    {"pause-timed-out", QT_TRANSLATE_NOOP("nanscope::core", "no decision within %1 s: %2, as pause_default says")},
    {"steer-applied", QT_TRANSLATE_NOOP("nanscope::core", "%1 (request %2)")},
    {"steer-refused", QT_TRANSLATE_NOOP("nanscope::core", "request %2 refused: %1")},
    {"rank-nonfinite-from-other",
     QT_TRANSLATE_NOOP("nanscope::core",
                       "the gradient all-reduce brought NaN or Inf from another rank: this rank's own gradients were "
                       "finite, and DistributedDataParallel averaged the others' into them (`nanscope report FOLDER` "
                       "names the rank where they were born)")},
};

}  // namespace

const char *eventMessagePattern(const std::string &id)
{
    for (const Pattern &p : kPatterns)
        if (id == p.id)
            return p.english;
    return nullptr;
}

std::vector<std::pair<std::string, std::string>> eventMessagePatterns()
{
    std::vector<std::pair<std::string, std::string>> out;
    for (const Pattern &p : kPatterns)
        out.emplace_back(p.id, p.english);
    return out;
}

std::string composeEventText(const EventMessage &message)
{
    const char *pattern = eventMessagePattern(message.id);
    std::string out;
    if (!pattern) {
        for (const std::string &a : message.args)
            out += (out.empty() ? "" : " ") + a;
        return out;
    }
    for (const char *c = pattern; *c; ++c) {
        if (c[0] == '%' && c[1] >= '1' && c[1] <= '9') {
            const std::size_t n = std::size_t(c[1] - '1');
            if (n < message.args.size())
                out += message.args[n];
            ++c;
        } else {
            out += *c;
        }
    }
    return out;
}

}  // namespace nanscope
