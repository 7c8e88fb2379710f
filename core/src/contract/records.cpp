// The names of the contract's enumerations, as run files and `run --json` spell them.
#include "nanscope/records.h"

namespace nanscope {

const char *phaseName(Phase p)
{
    switch (p) {
    case Phase::None: return "none";
    case Phase::Input: return "input";
    case Phase::Forward: return "forward";
    case Phase::Loss: return "loss";
    case Phase::Backward: return "backward";
    case Phase::Parameter: return "parameter";
    case Phase::Update: return "update";
    }
    return "none";
}

Phase phaseFromName(const std::string &name)
{
    for (Phase p : {Phase::Input, Phase::Forward, Phase::Loss, Phase::Backward, Phase::Parameter, Phase::Update})
        if (name == phaseName(p))
            return p;
    return Phase::None;
}

const char *eventKindId(EventKind k)
{
    switch (k) {
    case EventKind::Info: return "info";
    case EventKind::FirstNonFinite: return "first-nonfinite";
    case EventKind::Recovery: return "recovery";
    case EventKind::Rollback: return "rollback";
    case EventKind::ControlChange: return "control-change";
    case EventKind::Paused: return "paused";
    case EventKind::Error: return "error";
    case EventKind::Warning: return "warning";
    }
    return "info";
}

EventKind eventKindFromId(const std::string &name)
{
    for (EventKind k : {EventKind::FirstNonFinite, EventKind::Recovery, EventKind::Rollback, EventKind::ControlChange,
                        EventKind::Paused, EventKind::Error, EventKind::Warning})
        if (name == eventKindId(k))
            return k;
    return EventKind::Info;
}

}  // namespace nanscope
