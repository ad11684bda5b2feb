#pragma once
// The parallel loops over the rows of a [rows, width] tensor shared by the
// fused CPU units (ops/bias_gelu.cpp, ops/add_layer_norm.cpp): a forward
// pass row by row, and a backward pass that also sums per-feature terms
// (bias, gamma, beta gradients) without depending on the thread count.
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mtbert::ops {

// Elements per task of at::parallel_for (fewer: one thread).
constexpr int64_t kRowGrainElements = 32768;
// Rows per block of the per-feature sums.
constexpr int64_t kSumBlockRows = 32;

// row(r) for every row, in parallel.
template <typename RowFn>
void for_each_row(int64_t rows, int64_t width, const RowFn& row) {
  at::parallel_for(0, rows, std::max<int64_t>(1, kRowGrainElements / width), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) row(r);
  });
}

// row(r, sums) for every row, in parallel over blocks of kSumBlockRows rows;
// `sums` points at the block's outs.size() x width accumulators (zeroed at
// the start, one width-long run per output), which row adds its terms to.
// Then outs[p][j] = the sum over the blocks, added in block order: the order
// of every addition depends on `rows` only, not on the thread count.
template <typename T, typename RowFn>
void for_each_row_summing(int64_t rows, int64_t width, const std::vector<T*>& outs, const RowFn& row) {
  const int64_t parts = static_cast<int64_t>(outs.size());
  const int64_t blocks = (rows + kSumBlockRows - 1) / kSumBlockRows;
  std::vector<T> partial(static_cast<size_t>(blocks * parts * width), T(0));
  const int64_t grain_blocks = std::max<int64_t>(1, kRowGrainElements / (kSumBlockRows * width));
  at::parallel_for(0, blocks, grain_blocks, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      T* sums = partial.data() + b * parts * width;
      for (int64_t r = b * kSumBlockRows; r < std::min(rows, (b + 1) * kSumBlockRows); ++r) row(r, sums);
    }
  });
  for (int64_t p = 0; p < parts; ++p) {
    std::fill(outs[p], outs[p] + width, T(0));
    for (int64_t b = 0; b < blocks; ++b) {
      const T* sums = partial.data() + (b * parts + p) * width;
      for (int64_t j = 0; j < width; ++j) outs[p][j] += sums[j];
    }
  }
}

}  // namespace mtbert::ops
