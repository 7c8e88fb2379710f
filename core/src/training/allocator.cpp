#include "nanscope/allocator.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace nanscope {

void keepFreedTensorMemory()
{
#if defined(__GLIBC__)
    // Setting either value also turns off glibc's dynamic adjustment of both.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
#endif
}

}  // namespace nanscope
