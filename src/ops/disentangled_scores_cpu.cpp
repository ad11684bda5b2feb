// CPU kernels of mtbert::disentangled_scores (see disentangled_scores.h); their
// CUDA twins are in disentangled_scores_cuda.cu, the pieces both share in
// disentangled_scores_views.h.
#include <algorithm>
#include <vector>

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>

#include "ops/disentangled_scores_backends.h"
#include "ops/disentangled_scores_checks.h"

namespace mtbert::ops::detail {

namespace {

// Rows per tile: query rows in the forward pass, layout rows of a term's
// gradient in the backward pass (see the loops below).
constexpr int64_t kTile = 16;

// The gradient of one term, written through its view `out`:
// out[b,h,row,r] = scale * sum of g over the scores of that row whose
// distance maps to r, summed in increasing order of the other index
// (deterministic); layout rows past N (a banded term's padding) are zero.
// `by_query` chooses the term: c2p rows are query rows i (sums over keys j),
// p2c rows are key rows j (sums over queries i).
// Gradients are not saturated: an overflow must stay visible to fp16 loss
// scaling.
template <bool by_query, typename scalar_t>
void scatter_term(const scalar_t* g_ptr, int64_t batch_heads, int64_t heads, int64_t n, const int64_t* table,
                  const TermView<scalar_t>& out, double scale) {
  using acc = acc_t<scalar_t>;
  const int64_t blocks = (out.rows + kTile - 1) / kTile;
  const acc sc = static_cast<acc>(scale);
  // One task per block of kTile layout rows of one (b, h). For p2c the
  // block's columns of g are read a cache line at a time (row i of g
  // outer) instead of through a transposed copy.
  at::parallel_for(0, batch_heads * blocks, 1, [&](int64_t begin, int64_t end) {
    std::vector<acc> sum(kTile * out.width);
    int64_t first[kTile];
    for (int64_t task = begin; task < end; ++task) {
      const int64_t bh = task / blocks, p0 = (task % blocks) * kTile, p1 = std::min(out.rows, p0 + kTile);
      const int64_t valid = std::max<int64_t>(0, std::min(n, p1) - p0);
      for (int64_t p = p0; p < p1; ++p) first[p - p0] = out.first_row(p);
      const scalar_t* g_bh = g_ptr + bh * n * n;
      std::fill(sum.begin(), sum.end(), acc(0));
      if (by_query) {
        for (int64_t i = p0; i < p0 + valid; ++i) {
          acc* sum_i = sum.data() + (i - p0) * out.width;
          const int64_t first_i = first[i - p0];
          const int64_t* table_i = table + i + n - 1;  // table_i[-j] is the row of distance i - j
          for (int64_t j = 0; j < n; ++j) sum_i[table_i[-j] - first_i] += static_cast<acc>(g_bh[i * n + j]);
        }
      } else {
        for (int64_t i = 0; i < n; ++i) {
          const scalar_t* g_row = g_bh + i * n;
          const int64_t* table_i = table + i + n - 1;
          for (int64_t j = p0; j < p0 + valid; ++j)
            sum[(j - p0) * out.width + table_i[-j] - first[j - p0]] += static_cast<acc>(g_row[j]);
        }
      }
      scalar_t* o_bh = out.head(bh / heads, bh % heads);
      for (int64_t p = p0; p < p1; ++p) {
        scalar_t* o_row = o_bh + out.row_base(p) + first[p - p0] * out.column_stride;
        for (int64_t w = 0; w < out.width; ++w)
          o_row[w * out.column_stride] = static_cast<scalar_t>(sc * sum[(p - p0) * out.width + w]);
      }
    }
  });
}

// The gradient of p2p [H, 2N - 1]: out[h, i - j + N - 1] = scale * the sum of
// g[b,h,i,j] over the batch and the scores of that distance, summed row by
// row in a fixed order (one task per head: deterministic).
template <typename scalar_t>
void scatter_distances(const scalar_t* g_ptr, int64_t batch, int64_t heads, int64_t n,
                       const DistanceView<scalar_t>& out, double scale) {
  using acc = acc_t<scalar_t>;
  at::parallel_for(0, heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<acc> sum(2 * n - 1);
    for (int64_t h = begin; h < end; ++h) {
      std::fill(sum.begin(), sum.end(), acc(0));
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t i = 0; i < n; ++i) {
          const scalar_t* g_row = g_ptr + ((b * heads + h) * n + i) * n;
          acc* sum_i = sum.data() + i + n - 1;  // sum_i[-j] is distance i - j
          for (int64_t j = 0; j < n; ++j) sum_i[-j] += static_cast<acc>(g_row[j]);
        }
      }
      for (int64_t k = 0; k < 2 * n - 1; ++k)
        out.data[h * out.head_stride + k * out.distance_stride] =
            static_cast<scalar_t>(static_cast<acc>(scale) * sum[k]);
    }
  });
}

}  // namespace

at::Tensor forward_cpu(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                       const RelativePlanPtr& plan, double scale, const OptTensor& bias, const OptTensor& p2p) {
  const ScoreShape s = check_forward_args(content, c2p, p2c, plan, bias, p2p);
  const int64_t B = s.batch, H = s.heads, N = s.length;
  at::Tensor out = at::empty({B, H, N, N}, content.options());
  if (out.numel() == 0) return out;
  const int64_t* rel_ptr = plan->index().data_ptr<int64_t>();
  const at::Tensor zero = at::zeros({1}, content.options());
  const ScoreStrides cs = score_strides(content), bs = score_strides(bias, {B, H, N, N});

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, content.scalar_type(), "disentangled_scores_cpu", [&] {
    using acc = acc_t<scalar_t>;
    const scalar_t* zero_ptr = zero.data_ptr<scalar_t>();
    const scalar_t* c_ptr = content.data_ptr<scalar_t>();
    const auto cp = term_view<const scalar_t>(c2p, *plan, /*by_query=*/true, zero_ptr);
    const auto pc = term_view<const scalar_t>(p2c, *plan, /*by_query=*/false, zero_ptr);
    const auto pp = distance_view<const scalar_t>(p2p, zero_ptr);
    const scalar_t* b_ptr = present(bias) ? bias->data_ptr<scalar_t>() : zero_ptr;
    scalar_t* o_ptr = out.data_ptr<scalar_t>();
    const acc sc = static_cast<acc>(scale);
    // One task per tile of kTile query rows of one (b, h). Within a tile the
    // key j is the outer loop: for consecutive rows i, p2c[j, row(i, j)]
    // are neighbours in memory (row(i, j) depends on i - j), where a row-by-row
    // loop would stride through p2c by a whole row per score.
    const int64_t tiles = (N + kTile - 1) / kTile;
    at::parallel_for(0, B * H * tiles, 1, [&](int64_t begin, int64_t end) {
      int64_t c2p_base[kTile];
      for (int64_t task = begin; task < end; ++task) {
        const int64_t bh = task / tiles, b = bh / H, h = bh % H;
        const int64_t i0 = (task % tiles) * kTile, i1 = std::min(N, i0 + kTile);
        for (int64_t i = i0; i < i1; ++i) c2p_base[i - i0] = cp.row_base(i);
        const scalar_t* c_bh = c_ptr + b * cs.s0 + h * cs.s1;
        const scalar_t* cp_bh = cp.head(b, h);
        const scalar_t* pc_bh = pc.head(b, h);
        const scalar_t* b_bh = b_ptr + b * bs.s0 + h * bs.s1;
        scalar_t* o_bh = o_ptr + bh * N * N;
        for (int64_t j = 0; j < N; ++j) {
          const scalar_t* pc_j = pc_bh + pc.row_base(j);
          const int64_t* rel_j = rel_ptr - j + N - 1;  // rel_j[i] is the row of distance i - j
          const scalar_t* pp_j = pp.data + h * pp.head_stride + (N - 1 - j) * pp.distance_stride;
          for (int64_t i = i0; i < i1; ++i) {
            const int64_t r = rel_j[i];
            const acc position = static_cast<acc>(cp_bh[c2p_base[i - i0] + r * cp.column_stride]) +
                                 static_cast<acc>(pc_j[r * pc.column_stride]) +
                                 static_cast<acc>(pp_j[i * pp.distance_stride]);
            o_bh[i * N + j] = saturate<scalar_t>(static_cast<acc>(c_bh[i * cs.s2 + j * cs.s3]) + sc * position +
                                                 static_cast<acc>(b_bh[i * bs.s2 + j * bs.s3]));
          }
        }
      }
    });
  });
  return out;
}

void backward_cpu(const at::Tensor& grad_in, const RelativePlanPtr& plan, double scale, const OptTensor& grad_c2p,
                  const OptTensor& grad_p2c, const OptTensor& grad_p2p) {
  const ScoreShape s = check_backward_args(grad_in, plan, grad_c2p, grad_p2c, grad_p2p);
  if (grad_in.numel() == 0) return;
  const at::Tensor grad = grad_in.contiguous();
  const int64_t* table = plan->index().data_ptr<int64_t>();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, grad.scalar_type(), "disentangled_scores_backward_cpu",
                                  [&] {
    const scalar_t* g_ptr = grad.data_ptr<scalar_t>();
    const int64_t batch_heads = s.batch * s.heads;
    if (present(grad_c2p) && grad_c2p->numel() > 0)
      scatter_term<true>(g_ptr, batch_heads, s.heads, s.length, table,
                         term_view<scalar_t>(grad_c2p, *plan, /*by_query=*/true, nullptr), scale);
    if (present(grad_p2c) && grad_p2c->numel() > 0)
      scatter_term<false>(g_ptr, batch_heads, s.heads, s.length, table,
                          term_view<scalar_t>(grad_p2c, *plan, /*by_query=*/false, nullptr), scale);
    if (present(grad_p2p) && grad_p2p->numel() > 0)
      scatter_distances(g_ptr, s.batch, s.heads, s.length, distance_view<scalar_t>(grad_p2p, nullptr), scale);
  });
}

}  // namespace mtbert::ops::detail
