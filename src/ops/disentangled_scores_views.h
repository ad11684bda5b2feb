#pragma once
// What the CPU kernels (disentangled_scores_cpu.cpp) and the CUDA kernels
// (disentangled_scores_cuda.cu) of mtbert::disentangled_scores share, compiled
// for host and device alike: the accumulation type, the saturation of
// reduced-precision results, and the addressing of the operands. The host
// code that fills these views from tensors is in disentangled_scores_checks.h.
#include <cstdint>
#include <type_traits>

#include <c10/macros/Macros.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

namespace mtbert::ops::detail {

// double accumulates in double; float, half and bfloat16 in float.
template <typename scalar_t>
using acc_t = std::conditional_t<std::is_same<scalar_t, double>::value, double, float>;

// The largest finite value of the reduced-precision dtypes, where results
// saturate (see disentangled_scores.h); 0 for float and double, which pass
// through.
template <typename scalar_t>
struct Saturation {
  static constexpr float limit = 0.0f;
};
template <>
struct Saturation<c10::Half> {
  static constexpr float limit = 65504.0f;
};
template <>
struct Saturation<c10::BFloat16> {
  static constexpr float limit = 3.38953139e38f;
};

template <typename scalar_t>
C10_HOST_DEVICE inline scalar_t saturate(acc_t<scalar_t> v) {
  constexpr float limit = Saturation<scalar_t>::limit;
  if (limit > 0.0f) {
    if (v > limit) v = limit;
    else if (v < -limit) v = -limit;
  }
  return static_cast<scalar_t>(v);
}

// content or bias as [B, H, N, N] strides; an absent bias has zero strides
// and reads a single zero, so the kernels have no per-element branches.
struct ScoreStrides {
  int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
};

// A position term (or its gradient): (b, h, layout row p, relative row r) at
//   b * batch_stride + h * head_stride + row_base(p) + r * column_stride,
// valid for r in [first_row(p), first_row(p) + width). A full [B, H, N, S]
// term is one tile of N rows with first row 0; a banded [B, H, tiles, T, W]
// one has tiles of T rows, each with its first row in `first`. `rows` counts
// the layout's rows (tiles * T, padding past N included). An absent term
// reads a single zero: zero strides, width 0, one tile.
template <typename T>
struct TermView {
  T* data = nullptr;
  int64_t batch_stride = 0, head_stride = 0, tile_stride = 0, row_stride = 0, column_stride = 0;
  int64_t tile_rows = 1, width = 0, rows = 0;
  const int64_t* first = nullptr;  // per tile (on the kernel's device); null: 0

  C10_HOST_DEVICE int64_t first_row(int64_t p) const { return first ? first[p / tile_rows] : 0; }
  // The address of relative row 0 of layout row p, within its (b, h).
  C10_HOST_DEVICE int64_t row_base(int64_t p) const {
    const int64_t tile = p / tile_rows;
    return tile * tile_stride + (p - tile * tile_rows) * row_stride - (first ? first[tile] : 0) * column_stride;
  }
  C10_HOST_DEVICE T* head(int64_t b, int64_t h) const { return data + b * batch_stride + h * head_stride; }
};

// p2p: (h, distance entry k = i - j + N - 1) at h * head_stride + k *
// distance_stride; absent: a single zero through zero strides.
template <typename T>
struct DistanceView {
  T* data = nullptr;
  int64_t head_stride = 0, distance_stride = 0;
};

}  // namespace mtbert::ops::detail
