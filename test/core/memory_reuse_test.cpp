// keep_freed_memory_for_reuse: a large block freed and allocated again is
// served from memory the process already has (no new page faults), where
// glibc's defaults would unmap it and fault every page back in.
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>

#include "core/memory_reuse.h"
#include "support/test_support.h"

namespace {

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Allocates `bytes`, writes every page, frees it; the page faults it took.
long faults_of_a_fresh_block(size_t bytes) {
  const long before = minor_faults();
  auto* block = static_cast<char*>(std::malloc(bytes));
  REQUIRE(block != nullptr);
  std::memset(block, 1, bytes);
  const long faults = minor_faults() - before;
  // Read it back, or the compiler may drop the writes to a block freed unread.
  CHECK(static_cast<volatile char*>(block)[bytes / 2] == 1);
  std::free(block);
  return faults;
}

}  // namespace

TEST_CASE("freed memory is reused without page faults", "[core][memory]") {
#if !defined(__GLIBC__)
  MTBERT_SKIP("not glibc: keep_freed_memory_for_reuse does nothing here");
#else
  REQUIRE(mtbert::keep_freed_memory_for_reuse());
  const size_t bytes = size_t{64} << 20;  // above glibc's largest mmap threshold
  faults_of_a_fresh_block(bytes);         // the heap grows once
  // 64 MiB is 16,384 pages of 4 KiB: a block taken from the system again
  // would fault most of them in. Other threads of the test process may fault
  // a few pages meanwhile.
  CHECK(faults_of_a_fresh_block(bytes) < 1000);
#endif
}
