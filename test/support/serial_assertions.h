#pragma once
// Assertions from several threads. The data-parallel tests run their ranks
// as threads, and Catch2 before 3.9 is not thread-safe: two ranks asserting at
// once tripped v3.7's output redirection (an abort). MTBERT_SERIAL(CHECK(x))
// makes assertions take turns. Keep collectives out of the asserted
// expression: a rank waiting in one while holding the lock would keep the
// others from joining.
#include <mutex>

namespace mtbert::test {

inline std::mutex& assertion_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace mtbert::test

#define MTBERT_SERIAL(...)                                                          \
  do {                                                                              \
    std::lock_guard<std::mutex> mtbert_assertion_lock_(::mtbert::test::assertion_mutex()); \
    __VA_ARGS__;                                                                    \
  } while (false)
