// set_thread_count: one setting reaches LibTorch's intra-op pool and the BLAS
// library's own (OpenBLAS behind Debian's libblas.so.3), so that `threads: N`
// is the number of threads a run computes with.
#include <ATen/Parallel.h>

#include "core/thread_count.h"
#include "support/test_support.h"
#include "support/thread_count.h"

TEST_CASE("set_thread_count sets LibTorch's threads and the BLAS library's") {
  mtbert::test::RestoreThreadCount restore;
  CHECK(mtbert::set_thread_count(1) == 1);
  CHECK(at::get_num_threads() == 1);
  if (mtbert::blas_thread_count() < 0) MTBERT_SKIP("no BLAS library with a thread pool of its own is loaded");
  CHECK(mtbert::blas_thread_count() == 1);
  CHECK(mtbert::set_thread_count(2) == 2);
  CHECK(mtbert::blas_thread_count() == 2);
}

TEST_CASE("set_thread_count(0) means one thread per available core") {
  mtbert::test::RestoreThreadCount restore;
  const int cores = mtbert::available_cores();
  CHECK(cores >= 1);
  CHECK(mtbert::set_thread_count(0) == cores);
  if (mtbert::blas_thread_count() < 0) MTBERT_SKIP("no BLAS library with a thread pool of its own is loaded");
  CHECK(mtbert::blas_thread_count() == cores);
}
