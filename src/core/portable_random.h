#pragma once
// Random draws that come out the same on every standard library. The standard
// fixes std::mt19937_64's output sequence but not the algorithms of
// std::uniform_int_distribution or std::shuffle, so a plan drawn with those
// could differ between libstdc++ and libc++ (and a run resumed on another
// machine would then see other batches). These are written out here.
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace mtbert {

// A generator seeded from a base seed and a stream number (a pass, an epoch),
// each stream statistically independent of its neighbours (SplitMix64 mixing).
std::mt19937_64 seeded_generator(uint64_t seed, uint64_t stream);

// A uniform draw from [0, n), n > 0, by rejection: no modulo bias.
uint64_t uniform_below(std::mt19937_64& rng, uint64_t n);

// Fisher-Yates: every permutation equally likely.
template <class T>
void portable_shuffle(std::vector<T>& items, std::mt19937_64& rng) {
  for (std::size_t i = items.size(); i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(uniform_below(rng, i));
    std::swap(items[i - 1], items[j]);
  }
}

}  // namespace mtbert
