#pragma once
// Mutated copies of valid inputs, for the readers' fuzz tests: each copy gets
// one to four edits (a byte changed, a span deleted, doubled or cut off, a
// token spliced in that readers find hard: quotes, brackets, YAML aliases,
// NULs, numbers beyond int64 or double). Deterministic: the same seed gives
// the same copies, so a failing case can be replayed from its seed.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace mtbert::test {

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  std::string mutate(std::string text) {
    const int edits = 1 + static_cast<int>(rng_() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t n = text.size();
      const size_t at = n == 0 ? 0 : rng_() % n;
      const size_t span = n == 0 ? 0 : 1 + rng_() % std::min<size_t>(n - at, 64);
      switch (rng_() % 6) {
        case 0:  // a byte changed
          if (n > 0) text[at] = static_cast<char>(rng_() % 256);
          break;
        case 1:  // a span deleted
          text.erase(at, span);
          break;
        case 2:  // a span doubled
          text.insert(at, text.substr(at, span));
          break;
        case 3:  // cut off
          text.resize(at);
          break;
        default: {  // a hard token spliced in
          static const std::vector<std::string> tokens = {
              "\"", "'", "[", "]", "{", "}", ":", ",", "\t", "\n", "\r\n", std::string(1, '\0'), "&a ", "*a", "- ",
              "~", "null", "-1", "0", "1e308", "-1e308", "nan", "18446744073709551616", "-9223372036854775809",
              "4294967297", "[[[[[[[[[[[[[[[[", "\"\"\"", "\xEF\xBB\xBF", "\xff\xfe", "true"};
          text.insert(at, tokens[rng_() % tokens.size()]);
        }
      }
    }
    return text;
  }

 private:
  std::mt19937_64 rng_;
};

// Cases per reader: MTBERT_FUZZ_CASES, or `fallback`.
inline int fuzz_cases(int fallback) {
  const char* v = std::getenv("MTBERT_FUZZ_CASES");
  return v && *v ? std::atoi(v) : fallback;
}

}  // namespace mtbert::test
