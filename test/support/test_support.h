#pragma once
// Where tests find their inputs, and a visible SKIP for tests whose inputs are
// absent on this machine (CTest reports a test printing "SKIPPED:" as skipped).
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "support/catch.h"

namespace mtbert::test {

inline std::filesystem::path env_path(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return std::filesystem::path(v && *v ? v : fallback);
}

// Fixtures written by scripts/make_test_fixtures.py (a CTest setup step).
inline std::filesystem::path fixtures_dir() { return env_path("MTBERT_FIXTURES", MTBERT_TEST_FIXTURES); }
inline std::filesystem::path source_dir() { return env_path("MTBERT_SOURCE_DIR", MTBERT_TEST_SOURCE_DIR); }
// The built `mtbert` executable, and Debian's python3 (the one with torch).
inline std::filesystem::path mtbert_binary() { return env_path("MTBERT_BINARY", MTBERT_TEST_BINARY); }
inline std::filesystem::path python() { return env_path("MTBERT_PYTHON", MTBERT_TEST_PYTHON); }

// ../shared/data, when this machine has it.
inline std::optional<std::filesystem::path> shared_data_dir() {
  auto p = env_path("MTBERT_DATA", MTBERT_TEST_DATA);
  if (std::filesystem::is_directory(p)) return p;
  return std::nullopt;
}

}  // namespace mtbert::test

// Ends the current test case, reported by CTest as skipped.
#define MTBERT_SKIP(reason)                                   \
  do {                                                        \
    std::cout << "SKIPPED: " << (reason) << std::endl;        \
    WARN("SKIPPED: " << (reason));                            \
    return;                                                   \
  } while (0)
