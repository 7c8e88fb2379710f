#pragma once
// The run a window trains live: a Session of the core. The window (ui/) takes this as its
// RunSourceFactory and never builds one itself; tests of the window hand in the same.
#include "nanscope/run_source.h"

#include <memory>

namespace nanscope {

std::unique_ptr<RunSource> newLiveSession();

}  // namespace nanscope
