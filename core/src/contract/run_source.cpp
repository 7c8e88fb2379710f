#include "nanscope/run_source.h"

#include "contract/translatable.h"

namespace nanscope {

const char *sessionStateName(SessionState s)
{
    switch (s) {
    case SessionState::Idle: return QT_TRANSLATE_NOOP("nanscope::core", "idle");
    case SessionState::Running: return QT_TRANSLATE_NOOP("nanscope::core", "running");
    case SessionState::Paused: return QT_TRANSLATE_NOOP("nanscope::core", "paused");
    case SessionState::Finished: return QT_TRANSLATE_NOOP("nanscope::core", "finished");
    case SessionState::Failed: return QT_TRANSLATE_NOOP("nanscope::core", "failed");
    }
    return QT_TRANSLATE_NOOP("nanscope::core", "idle");
}

}  // namespace nanscope
