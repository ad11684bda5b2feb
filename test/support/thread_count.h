#pragma once
// Restores the intra-op thread count a test changes (tests that check a
// result does not depend on the thread count).
#include <ATen/Parallel.h>

namespace mtbert::test {

struct RestoreThreadCount {
  int saved = at::get_num_threads();
  ~RestoreThreadCount() { at::set_num_threads(saved); }
};

}  // namespace mtbert::test
