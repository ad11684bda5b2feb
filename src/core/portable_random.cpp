#include "core/portable_random.h"

#include "core/internal_error.h"

namespace mtbert {

namespace {

// SplitMix64's finalizer (Steele, Lea & Flood 2014): a bijection on 64 bits
// whose outputs for consecutive inputs look unrelated.
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

std::mt19937_64 seeded_generator(uint64_t seed, uint64_t stream) {
  return std::mt19937_64(splitmix64(splitmix64(seed) ^ stream));
}

uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  check_invariant(n != 0, "uniform_below: empty range");
  // Draws below 2^64 mod n would make the smallest residues more likely.
  const uint64_t threshold = (0 - n) % n;
  for (;;) {
    const uint64_t x = rng();
    if (x >= threshold) return x % n;
  }
}

}  // namespace mtbert
