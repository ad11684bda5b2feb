// CPU kernels of mtbert::disentangled_scores (see disentangled_scores.h).
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include "ops/disentangled_scores_checks.h"

namespace mtbert::ops {

namespace {

using OptTensor = c10::optional<at::Tensor>;

// Rows per tile: query rows in the forward pass, key columns for the p2c
// gradient (see the loops below).
constexpr int64_t kTile = 16;

template <typename scalar_t>
using acc_t = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;

// Reduced-precision results saturate at the dtype's finite range: a masked
// score plus a negative position term must not become -inf (see the header).
template <typename scalar_t>
scalar_t saturate(acc_t<scalar_t> v) {
  if constexpr (std::is_same_v<scalar_t, at::Half> || std::is_same_v<scalar_t, at::BFloat16>) {
    const auto hi = static_cast<acc_t<scalar_t>>(std::numeric_limits<scalar_t>::max());
    if (v > hi) v = hi;
    else if (v < -hi) v = -hi;
  }
  return static_cast<scalar_t>(v);
}

// The bias and content as (data, strides over [B, H, N, N]); an absent bias
// reads a single zero through zero strides, so the kernel has no per-element
// branches.
struct Operand {
  at::Tensor tensor;
  int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
};

Operand operand(const OptTensor& t, const at::Tensor& zero, at::IntArrayRef expand_to = {}) {
  if (!detail::present(t)) return {zero};
  at::Tensor v = expand_to.empty() ? *t : t->expand(expand_to);
  return {v, v.stride(0), v.stride(1), v.stride(2), v.stride(3)};
}


// An absent term reads one zero: base 0, strides 0.
template <typename scalar_t>
const scalar_t* term_data(const OptTensor& t, const at::Tensor& zero) {
  return detail::present(t) ? t->data_ptr<scalar_t>() : zero.data_ptr<scalar_t>();
}

at::Tensor forward_cpu(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                       const at::Tensor& rel_index, double scale, const OptTensor& bias, at::IntArrayRef c2p_first,
                       at::IntArrayRef p2c_first, const OptTensor& p2p) {
  detail::ScoreShape s = detail::check_forward_args(content, c2p, p2c, rel_index, bias, p2p);
  const auto [cl, pl] = detail::term_layouts(s, c2p, c2p_first, p2c, p2c_first);
  const detail::DistanceLayout dl = detail::distance_layout(p2p, "p2p", s.heads, s.length);
  const int64_t B = s.batch, H = s.heads, N = s.length;
  at::Tensor out = at::empty({B, H, N, N}, content.options());
  if (out.numel() == 0) return out;
  const at::Tensor rel = rel_index.contiguous();
  const int64_t* rel_ptr = rel.data_ptr<int64_t>();
  detail::check_windows(rel_ptr, N, cl, pl);
  const at::Tensor zero = at::zeros({1}, content.options());
  const Operand cc = operand(content, zero), bb = operand(bias, zero, {B, H, N, N});

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, content.scalar_type(), "disentangled_scores_cpu", [&] {
    using acc = acc_t<scalar_t>;
    const scalar_t* c_ptr = cc.tensor.data_ptr<scalar_t>();
    const scalar_t* cp_ptr = term_data<scalar_t>(c2p, zero);
    const scalar_t* pc_ptr = term_data<scalar_t>(p2c, zero);
    const scalar_t* pp_ptr = term_data<scalar_t>(p2p, zero);
    const scalar_t* b_ptr = bb.tensor.data_ptr<scalar_t>();
    scalar_t* o_ptr = out.data_ptr<scalar_t>();
    const acc sc = static_cast<acc>(scale);
    // One task per tile of kTile query rows of one (b, h). Within a tile the
    // key j is the outer loop: for consecutive rows i, p2c[j, row(i, j)]
    // are neighbours in memory (row(i, j) depends on i - j), where a row-by-row
    // loop would stride through p2c by a whole row per score.
    const int64_t tiles = (N + kTile - 1) / kTile;
    at::parallel_for(0, B * H * tiles, 1, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t bh = task / tiles, b = bh / H, h = bh % H;
        const int64_t i0 = (task % tiles) * kTile, i1 = std::min(N, i0 + kTile);
        const scalar_t* c_bh = c_ptr + b * cc.s0 + h * cc.s1;
        const scalar_t* cp_bh = cp_ptr + b * cl.batch_stride + h * cl.head_stride;
        const scalar_t* pc_bh = pc_ptr + b * pl.batch_stride + h * pl.head_stride;
        const scalar_t* b_bh = b_ptr + b * bb.s0 + h * bb.s1;
        scalar_t* o_bh = o_ptr + bh * N * N;
        for (int64_t j = 0; j < N; ++j) {
          const scalar_t* pc_j = pc_bh + pl.row_base[j];
          const int64_t* rel_j = rel_ptr - j + N - 1;  // rel_j[i] is the row of distance i - j
          const scalar_t* pp_j = pp_ptr + h * dl.head_stride + (N - 1 - j) * dl.distance_stride;
          for (int64_t i = i0; i < i1; ++i) {
            const int64_t r = rel_j[i];
            const acc position = static_cast<acc>(cp_bh[cl.row_base[i] + r * cl.column_stride]) +
                                 static_cast<acc>(pc_j[r * pl.column_stride]) +
                                 static_cast<acc>(pp_j[i * dl.distance_stride]);
            o_bh[i * N + j] = saturate<scalar_t>(static_cast<acc>(c_bh[i * cc.s2 + j * cc.s3]) + sc * position +
                                                 static_cast<acc>(b_bh[i * bb.s2 + j * bb.s3]));
          }
        }
      }
    });
  });
  return out;
}

// The gradient of one term, written through its layout `l` into `out`:
// out[b,h,row,r] = scale * sum of g over the scores of that row whose
// distance maps to r, summed in increasing order of the other index
// (deterministic); layout rows past N (a banded term's padding) are zero.
// `by_query` chooses the term: c2p rows are query rows i (sums over keys j),
// p2c rows are key rows j (sums over queries i).
// Gradients are not saturated: an overflow must stay visible to fp16 loss
// scaling.
template <bool by_query>
void scatter_term(const at::Tensor& g, const int64_t* table, const detail::TermLayout& l, double scale,
                  const at::Tensor& out) {
  const int64_t H = g.size(1), N = g.size(2), BH = g.size(0) * H, blocks = (l.rows + kTile - 1) / kTile;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, g.scalar_type(), "disentangled_scores_backward_cpu", [&] {
    using acc = acc_t<scalar_t>;
    const scalar_t* g_ptr = g.data_ptr<scalar_t>();
    scalar_t* o_ptr = out.data_ptr<scalar_t>();
    const acc sc = static_cast<acc>(scale);
    // One task per block of kTile layout rows of one (b, h). For p2c the
    // block's columns of g are read a cache line at a time (row i of g
    // outer) instead of through a transposed copy.
    at::parallel_for(0, BH * blocks, 1, [&](int64_t begin, int64_t end) {
      std::vector<acc> sum(kTile * l.width);
      for (int64_t task = begin; task < end; ++task) {
        const int64_t bh = task / blocks, p0 = (task % blocks) * kTile, p1 = std::min(l.rows, p0 + kTile);
        const int64_t valid = std::max<int64_t>(0, std::min(N, p1) - p0);
        const scalar_t* g_bh = g_ptr + bh * N * N;
        std::fill(sum.begin(), sum.end(), acc(0));
        if (by_query) {
          for (int64_t i = p0; i < p0 + valid; ++i) {
            acc* sum_i = sum.data() + (i - p0) * l.width;
            const int64_t* table_i = table + i + N - 1;  // table_i[-j] is the row of distance i - j
            for (int64_t j = 0; j < N; ++j) sum_i[table_i[-j] - l.row_first[i]] += static_cast<acc>(g_bh[i * N + j]);
          }
        } else {
          for (int64_t i = 0; i < N; ++i) {
            const scalar_t* g_row = g_bh + i * N;
            const int64_t* table_i = table + i + N - 1;
            for (int64_t j = p0; j < p0 + valid; ++j)
              sum[(j - p0) * l.width + table_i[-j] - l.row_first[j]] += static_cast<acc>(g_row[j]);
          }
        }
        scalar_t* o_bh = o_ptr + (bh / H) * l.batch_stride + (bh % H) * l.head_stride;
        for (int64_t p = p0; p < p1; ++p) {
          scalar_t* o_row = o_bh + l.row_base[p] + l.row_first[p] * l.column_stride;
          for (int64_t w = 0; w < l.width; ++w)
            o_row[w * l.column_stride] = static_cast<scalar_t>(sc * sum[(p - p0) * l.width + w]);
        }
      }
    });
  });
}

// The gradient of p2p [H, 2N - 1]: out[h, i - j + N - 1] = scale * the sum of
// g[b,h,i,j] over the batch and the scores of that distance, summed row by
// row in a fixed order (one task per head: deterministic).
void scatter_distances(const at::Tensor& g, const detail::DistanceLayout& l, double scale, const at::Tensor& out) {
  const int64_t B = g.size(0), H = g.size(1), N = g.size(2);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, g.scalar_type(), "disentangled_scores_p2p_cpu", [&] {
    using acc = acc_t<scalar_t>;
    const scalar_t* g_ptr = g.data_ptr<scalar_t>();
    scalar_t* o_ptr = out.data_ptr<scalar_t>();
    at::parallel_for(0, H, 1, [&](int64_t begin, int64_t end) {
      std::vector<acc> sum(2 * N - 1);
      for (int64_t h = begin; h < end; ++h) {
        std::fill(sum.begin(), sum.end(), acc(0));
        for (int64_t b = 0; b < B; ++b) {
          for (int64_t i = 0; i < N; ++i) {
            const scalar_t* g_row = g_ptr + ((b * H + h) * N + i) * N;
            acc* sum_i = sum.data() + i + N - 1;  // sum_i[-j] is distance i - j
            for (int64_t j = 0; j < N; ++j) sum_i[-j] += static_cast<acc>(g_row[j]);
          }
        }
        for (int64_t k = 0; k < 2 * N - 1; ++k)
          o_ptr[h * l.head_stride + k * l.distance_stride] = static_cast<scalar_t>(static_cast<acc>(scale) * sum[k]);
      }
    });
  });
}

void backward_cpu(const at::Tensor& grad_in, const at::Tensor& rel_index, double scale, const OptTensor& grad_c2p,
                  at::IntArrayRef c2p_first, const OptTensor& grad_p2c, at::IntArrayRef p2c_first,
                  const OptTensor& grad_p2p) {
  TORCH_CHECK(grad_in.dim() == 4 && grad_in.size(2) == grad_in.size(3),
              "disentangled_scores_backward: grad must be [B, H, N, N], got ", grad_in.sizes());
  detail::ScoreShape s{grad_in.size(0), grad_in.size(1), grad_in.size(2), 0};
  TORCH_CHECK(rel_index.dim() == 1 && rel_index.size(0) == std::max<int64_t>(2 * s.length - 1, 0) &&
                  rel_index.scalar_type() == at::kLong,
              "disentangled_scores_backward: rel_index must be int64 [2N - 1]");
  const auto [cl, pl] = detail::term_layouts(s, grad_c2p, c2p_first, grad_p2c, p2c_first);
  const detail::DistanceLayout dl = detail::distance_layout(grad_p2p, "grad_p2p", s.heads, s.length);
  const at::Tensor grad = grad_in.contiguous();
  const at::Tensor rel = rel_index.contiguous();
  if (s.length > 0) detail::check_windows(rel.data_ptr<int64_t>(), s.length, cl, pl);
  if (cl.present && grad_c2p->numel() > 0) scatter_term<true>(grad, rel.data_ptr<int64_t>(), cl, scale, *grad_c2p);
  if (pl.present && grad_p2c->numel() > 0) scatter_term<false>(grad, rel.data_ptr<int64_t>(), pl, scale, *grad_p2c);
  if (dl.present && grad_p2p->numel() > 0) scatter_distances(grad, dl, scale, *grad_p2p);
}

}  // namespace

}  // namespace mtbert::ops

TORCH_LIBRARY_IMPL(mtbert, CPU, m) {
  m.impl("disentangled_scores", &mtbert::ops::forward_cpu);
  m.impl("disentangled_scores_backward", &mtbert::ops::backward_cpu);
}
