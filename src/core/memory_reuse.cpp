#include "core/memory_reuse.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace mtbert {

bool keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  // No block from mmap (each would be unmapped on free), and no trimming of
  // the heap's top (1 GiB: larger than any gap a step leaves).
  const bool no_mmap = mallopt(M_MMAP_MAX, 0) == 1;
  const bool no_trim = mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
  return no_mmap && no_trim;
#else
  return false;
#endif
}

}  // namespace mtbert
