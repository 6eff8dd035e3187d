#include "common/retain_freed_memory.h"

#include <cstdlib>  // defines __GLIBC__ where the C library is glibc

#include "common/large_block_cache.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace izwi {

bool retain_freed_memory() {
  install_large_block_cache();
#if defined(__GLIBC__)
  constexpr int kLargestHeapBlock = 32 << 20;  // glibc refuses a larger mmap threshold
  // Setting either threshold also stops glibc from adjusting them as blocks are freed.
  return mallopt(M_MMAP_THRESHOLD, kLargestHeapBlock) == 1 && mallopt(M_TRIM_THRESHOLD, -1) == 1;
#else
  return false;
#endif
}

}  // namespace izwi
