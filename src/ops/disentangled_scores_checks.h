#pragma once
// Argument checks of mtbert::disentangled_scores shared by its CPU and CUDA
// kernels (and compiled by both the C++ compiler and nvcc), and the layout of
// a position term: full ([B, H, N, S]) or banded ([B, H, tiles, T, W] with a
// first relative row per tile), reduced to one address per row so that the
// kernels treat both alike.
#include <algorithm>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/Exception.h>
#include <c10/util/Optional.h>

namespace mtbert::ops::detail {

inline bool present(const c10::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

// Sizes of one call: batch, heads, length, and the relative rows addressed
// (one past the last row any present term holds).
struct ScoreShape {
  int64_t batch = 0, heads = 0, length = 0, span = 0;
};

// Where a term's value for (b, h, row, relative row r) lives:
//   b * batch_stride + h * head_stride + row_base[row] + r * column_stride,
// valid for r in [row_first[row], row_first[row] + width). `rows` counts the
// layout's rows (tiles * T for a banded term, padding rows included). An
// absent term has N rows of base 0, width 0 and zero strides: the kernels
// read it as a single zero.
struct TermLayout {
  bool present = false;
  int64_t batch_stride = 0, head_stride = 0, column_stride = 0, width = 0, rows = 0, span = 0;
  std::vector<int64_t> row_base, row_first;
};

inline TermLayout term_layout(const c10::optional<at::Tensor>& term, at::IntArrayRef first, const char* name,
                              const ScoreShape& s) {
  TermLayout l;
  if (!present(term)) {
    TORCH_CHECK(first.empty(), "disentangled_scores: ", name, "_first given without ", name);
    l.rows = s.length;
    l.row_base.assign(s.length, 0);
    l.row_first.assign(s.length, 0);
    return l;
  }
  const at::Tensor& t = *term;
  l.present = true;
  if (t.dim() == 4) {
    TORCH_CHECK(first.empty(), "disentangled_scores: ", name, "_first is for a banded [B, H, tiles, T, W] ", name);
    TORCH_CHECK(t.size(0) == s.batch && t.size(1) == s.heads && t.size(2) == s.length,
                "disentangled_scores: ", name, " must be [B, H, N, S] with B, H, N of content, got ", t.sizes());
    l.width = l.span = t.size(3);
    l.rows = s.length;
    l.row_base.resize(s.length);
    for (int64_t i = 0; i < s.length; ++i) l.row_base[i] = i * t.stride(2);
    l.row_first.assign(s.length, 0);
  } else {
    TORCH_CHECK(t.dim() == 5 && t.size(0) == s.batch && t.size(1) == s.heads && t.size(2) * t.size(3) >= s.length,
                "disentangled_scores: ", name, " must be [B, H, N, S] or banded [B, H, tiles, T, W] with tiles * T >= N, "
                "B, H, N of content, got ", t.sizes());
    TORCH_CHECK(static_cast<int64_t>(first.size()) == t.size(2), "disentangled_scores: ", name,
                "_first must hold one row per tile (", t.size(2), "), got ", first.size());
    const int64_t tile_rows = t.size(3);
    l.width = t.size(4);
    l.rows = t.size(2) * tile_rows;
    l.row_base.resize(l.rows);
    l.row_first.resize(l.rows);
    for (int64_t i = 0; i < l.rows; ++i) {
      const int64_t tile = i / tile_rows;
      TORCH_CHECK(first[tile] >= 0, "disentangled_scores: ", name, "_first holds a negative row");
      l.row_first[i] = first[tile];
      l.row_base[i] = tile * t.stride(2) + (i % tile_rows) * t.stride(3) - first[tile] * t.stride(4);
      l.span = std::max(l.span, first[tile] + l.width);
    }
  }
  l.batch_stride = t.stride(0);
  l.head_stride = t.stride(1);
  l.column_stride = t.stride(t.dim() - 1);
  return l;
}

// The position-to-position term: one value per head and distance, p2p[h,
// i - j + N - 1]; an absent term reads a single zero through zero strides.
struct DistanceLayout {
  bool present = false;
  int64_t head_stride = 0, distance_stride = 0;
};

inline DistanceLayout distance_layout(const c10::optional<at::Tensor>& p2p, const char* what, int64_t heads,
                                      int64_t length) {
  if (!present(p2p)) return {};
  TORCH_CHECK(p2p->dim() == 2 && p2p->size(0) == heads && p2p->size(1) == std::max<int64_t>(2 * length - 1, 0),
              "disentangled_scores: ", what, " must be [H, 2N - 1] = [", heads, ", ", 2 * length - 1, "], got ",
              p2p->sizes());
  return {true, p2p->stride(0), p2p->stride(1)};
}

inline ScoreShape check_forward_args(const at::Tensor& content, const c10::optional<at::Tensor>& c2p,
                                     const c10::optional<at::Tensor>& p2c, const at::Tensor& rel_index,
                                     const c10::optional<at::Tensor>& bias, const c10::optional<at::Tensor>& p2p) {
  TORCH_CHECK(content.dim() == 4 && content.size(2) == content.size(3),
              "disentangled_scores: content must be [B, H, N, N], got ", content.sizes());
  ScoreShape s{content.size(0), content.size(1), content.size(2), 0};
  for (const auto* term : {&c2p, &p2c, &p2p}) {
    if (!present(*term)) continue;
    TORCH_CHECK((*term)->scalar_type() == content.scalar_type() && (*term)->device() == content.device(),
                "disentangled_scores: c2p/p2c/p2p must have content's dtype and device");
  }
  TORCH_CHECK(rel_index.dim() == 1 && rel_index.size(0) == std::max<int64_t>(2 * s.length - 1, 0),
              "disentangled_scores: rel_index must be [2N - 1] = [", 2 * s.length - 1, "], got ", rel_index.sizes());
  TORCH_CHECK(rel_index.scalar_type() == at::kLong && rel_index.device() == content.device(),
              "disentangled_scores: rel_index must be int64 on content's device");
  if (present(bias)) {
    TORCH_CHECK(bias->scalar_type() == content.scalar_type() && bias->device() == content.device(),
                "disentangled_scores: bias must have content's dtype and device");
    TORCH_CHECK(bias->dim() <= 4, "disentangled_scores: bias must broadcast to [B, H, N, N], got ", bias->sizes());
  }
  return s;
}

// Every score (i, j) must find its relative row in the window its c2p row i
// and its p2c row j hold.
inline void check_windows(const int64_t* rel, int64_t n, const detail::TermLayout& c2p, const detail::TermLayout& p2c) {
  auto check = [&](const detail::TermLayout& term, int64_t row, int64_t r, int64_t distance, const char* what) {
    TORCH_CHECK(!term.present || (r >= term.row_first[row] && r < term.row_first[row] + term.width),
                "disentangled_scores: rel_index row ", r, " of distance ", distance, " lies outside the rows [",
                term.row_first[row], ", ", term.row_first[row] + term.width, ") that ", what, " ", row, " holds");
  };
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t r = rel[i - j + n - 1];
      check(c2p, i, r, i - j, "c2p's query row");
      check(p2c, j, r, i - j, "p2c's key row");
    }
  }
}

// The layouts of both terms; the call's span is the larger of theirs.
inline std::pair<TermLayout, TermLayout> term_layouts(ScoreShape& s, const c10::optional<at::Tensor>& c2p,
                                                      at::IntArrayRef c2p_first, const c10::optional<at::Tensor>& p2c,
                                                      at::IntArrayRef p2c_first) {
  auto layouts = std::make_pair(term_layout(c2p, c2p_first, "c2p", s), term_layout(p2c, p2c_first, "p2c", s));
  s.span = std::max(layouts.first.span, layouts.second.span);
  return layouts;
}

}  // namespace mtbert::ops::detail
