#include "nanscope/run_source.h"

namespace nanscope {

const char *sessionStateName(SessionState s)
{
    switch (s) {
    case SessionState::Idle: return "idle";
    case SessionState::Running: return "running";
    case SessionState::Paused: return "paused";
    case SessionState::Finished: return "finished";
    case SessionState::Failed: return "failed";
    }
    return "idle";
}

}  // namespace nanscope
