#pragma once
// Restores the thread count a test changes (tests that check a result does
// not depend on the thread count), LibTorch's and the BLAS library's alike.
#include <ATen/Parallel.h>

#include "core/thread_count.h"

namespace mtbert::test {

struct RestoreThreadCount {
  int saved = at::get_num_threads();
  ~RestoreThreadCount() { mtbert::set_thread_count(saved); }
};

}  // namespace mtbert::test
