// The versions come from CMake: the project's, and the one LibTorch's torch/version.h declares
// (read at configure time, so that code without LibTorch, the run-file writer among it, can name it).
#include "nanscope/version.h"

#ifndef NANSCOPE_VERSION
#define NANSCOPE_VERSION "unknown"
#endif
#ifndef NANSCOPE_LIBTORCH_VERSION
#define NANSCOPE_LIBTORCH_VERSION "unknown"
#endif

namespace nanscope {

const char *nanscopeVersion() { return NANSCOPE_VERSION; }
const char *libtorchVersion() { return NANSCOPE_LIBTORCH_VERSION; }

}  // namespace nanscope
