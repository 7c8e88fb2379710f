#include "live_session.h"

#include "nanscope/session.h"

namespace nanscope {

std::unique_ptr<RunSource> newLiveSession()
{
    return std::make_unique<Session>();
}

}  // namespace nanscope
