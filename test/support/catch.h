#pragma once
// Catch2 for the tests, v2 (Debian 12's header-only catch2) or v3 (Debian 13
// on, a compiled library). The tests are written with v3's names; on v2 the
// few that differ are defined here in terms of v2's.
// MTBERT_CATCH2_MAJOR comes from test/CMakeLists.txt (the version CMake found).
#if MTBERT_CATCH2_MAJOR >= 3
#include <catch2/catch_all.hpp>
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#include <string>
namespace Catch::Matchers {
inline StdString::ContainsMatcher ContainsSubstring(const std::string& text,
                                                    CaseSensitive::Choice cs = CaseSensitive::Yes) {
  return Contains(text, cs);
}
}  // namespace Catch::Matchers
#endif
