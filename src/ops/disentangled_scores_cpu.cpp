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

// A term as (data, strides over [B, H, N, S]); an absent term reads a single
// zero through zero strides, so the kernel has no per-element branches.
struct Operand {
  at::Tensor tensor;
  int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
};

Operand operand(const OptTensor& t, const at::Tensor& zero, at::IntArrayRef expand_to = {}) {
  if (!detail::present(t)) return {zero};
  at::Tensor v = expand_to.empty() ? *t : t->expand(expand_to);
  return {v, v.stride(0), v.stride(1), v.stride(2), v.stride(3)};
}

void check_index_range(const at::Tensor& rel_index, int64_t span) {
  if (span == 0 || rel_index.numel() == 0) return;
  const int64_t lo = rel_index.min().item<int64_t>(), hi = rel_index.max().item<int64_t>();
  TORCH_CHECK(lo >= 0 && hi < span, "disentangled_scores: rel_index holds values in [", lo, ", ", hi,
              "], outside [0, ", span, ")");
}

at::Tensor forward_cpu(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                       const at::Tensor& rel_index, double scale, const OptTensor& bias) {
  const detail::ScoreShape s = detail::check_forward_args(content, c2p, p2c, rel_index, bias);
  check_index_range(rel_index, s.span);
  const int64_t B = s.batch, H = s.heads, N = s.length;
  at::Tensor out = at::empty({B, H, N, N}, content.options());
  if (out.numel() == 0) return out;
  const at::Tensor zero = at::zeros({1}, content.options());
  const Operand cc = operand(content, zero), cp = operand(c2p, zero), pc = operand(p2c, zero),
                bb = operand(bias, zero, {B, H, N, N});
  const at::Tensor rel = rel_index.contiguous();
  const int64_t* rel_ptr = rel.data_ptr<int64_t>();

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, content.scalar_type(), "disentangled_scores_cpu", [&] {
    using acc = acc_t<scalar_t>;
    const scalar_t* c_ptr = cc.tensor.data_ptr<scalar_t>();
    const scalar_t* cp_ptr = cp.tensor.data_ptr<scalar_t>();
    const scalar_t* pc_ptr = pc.tensor.data_ptr<scalar_t>();
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
        const scalar_t* cp_bh = cp_ptr + b * cp.s0 + h * cp.s1;
        const scalar_t* pc_bh = pc_ptr + b * pc.s0 + h * pc.s1;
        const scalar_t* b_bh = b_ptr + b * bb.s0 + h * bb.s1;
        scalar_t* o_bh = o_ptr + bh * N * N;
        for (int64_t j = 0; j < N; ++j) {
          const scalar_t* pc_j = pc_bh + j * pc.s2;
          const int64_t* rel_j = rel_ptr - j + N - 1;  // rel_j[i] is the row of distance i - j
          for (int64_t i = i0; i < i1; ++i) {
            const int64_t r = rel_j[i];
            const acc position = static_cast<acc>(cp_bh[i * cp.s2 + r * cp.s3]) + static_cast<acc>(pc_j[r * pc.s3]);
            o_bh[i * N + j] = saturate<scalar_t>(static_cast<acc>(c_bh[i * cc.s2 + j * cc.s3]) + sc * position +
                                                 static_cast<acc>(b_bh[i * bb.s2 + j * bb.s3]));
          }
        }
      }
    });
  });
  return out;
}

// out[b,h,i,r] = scale * sum of g[b,h,i,j] over the j with
// table[i - j + N - 1] == r, summed in increasing j (deterministic). One task
// per row; g contiguous [B, H, N, N], out contiguous [B, H, N, span].
// Gradients are not saturated: an overflow must stay visible to fp16 loss
// scaling.
void scatter_rows(const at::Tensor& g, const at::Tensor& table, int64_t span, double scale, at::Tensor& out) {
  const int64_t N = g.size(2), rows = g.size(0) * g.size(1) * N;
  const int64_t* table_ptr = table.data_ptr<int64_t>();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, g.scalar_type(), "disentangled_scores_backward_cpu", [&] {
    using acc = acc_t<scalar_t>;
    const scalar_t* g_ptr = g.data_ptr<scalar_t>();
    scalar_t* o_ptr = out.data_ptr<scalar_t>();
    const acc sc = static_cast<acc>(scale);
    at::parallel_for(0, rows, std::max<int64_t>(1, 2048 / N), [&](int64_t begin, int64_t end) {
      std::vector<acc> sum(span);
      for (int64_t row = begin; row < end; ++row) {
        const int64_t i = row % N;
        const scalar_t* g_row = g_ptr + row * N;
        const int64_t* table_i = table_ptr + i + N - 1;  // table_i[-j] is the row of distance i - j
        std::fill(sum.begin(), sum.end(), acc(0));
        for (int64_t j = 0; j < N; ++j) sum[table_i[-j]] += static_cast<acc>(g_row[j]);
        scalar_t* o_row = o_ptr + row * span;
        for (int64_t r = 0; r < span; ++r) o_row[r] = static_cast<scalar_t>(sc * sum[r]);
      }
    });
  });
}

// out[b,h,j,r] = scale * sum of g[b,h,i,j] over the i with
// table[i - j + N - 1] == r, summed in increasing i (deterministic). One task
// per block of kTile columns, so that every row of g is read a cache line at
// a time instead of through a transposed copy.
void scatter_columns(const at::Tensor& g, const at::Tensor& table, int64_t span, double scale, at::Tensor& out) {
  const int64_t N = g.size(2), BH = g.size(0) * g.size(1), blocks = (N + kTile - 1) / kTile;
  const int64_t* table_ptr = table.data_ptr<int64_t>();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, g.scalar_type(), "disentangled_scores_backward_cpu", [&] {
    using acc = acc_t<scalar_t>;
    const scalar_t* g_ptr = g.data_ptr<scalar_t>();
    scalar_t* o_ptr = out.data_ptr<scalar_t>();
    const acc sc = static_cast<acc>(scale);
    at::parallel_for(0, BH * blocks, 1, [&](int64_t begin, int64_t end) {
      std::vector<acc> sum(kTile * span);
      for (int64_t task = begin; task < end; ++task) {
        const int64_t bh = task / blocks, j0 = (task % blocks) * kTile, j1 = std::min(N, j0 + kTile);
        const scalar_t* g_bh = g_ptr + bh * N * N;
        std::fill(sum.begin(), sum.end(), acc(0));
        for (int64_t i = 0; i < N; ++i) {
          const scalar_t* g_row = g_bh + i * N;
          const int64_t* table_i = table_ptr + i + N - 1;  // table_i[-j] is the row of distance i - j
          for (int64_t j = j0; j < j1; ++j) sum[(j - j0) * span + table_i[-j]] += static_cast<acc>(g_row[j]);
        }
        scalar_t* o_block = o_ptr + (bh * N + j0) * span;
        for (int64_t k = 0; k < (j1 - j0) * span; ++k) o_block[k] = static_cast<scalar_t>(sc * sum[k]);
      }
    });
  });
}

std::tuple<at::Tensor, at::Tensor> backward_cpu(const at::Tensor& grad_in, const at::Tensor& rel_index, int64_t span,
                                                double scale, bool want_c2p, bool want_p2c) {
  TORCH_CHECK(grad_in.dim() == 4 && grad_in.size(2) == grad_in.size(3),
              "disentangled_scores_backward: grad must be [B, H, N, N], got ", grad_in.sizes());
  const int64_t B = grad_in.size(0), H = grad_in.size(1), N = grad_in.size(2);
  TORCH_CHECK(rel_index.dim() == 1 && rel_index.size(0) == std::max<int64_t>(2 * N - 1, 0) &&
                  rel_index.scalar_type() == at::kLong,
              "disentangled_scores_backward: rel_index must be int64 [2N - 1]");
  check_index_range(rel_index, span);
  const at::Tensor grad = grad_in.contiguous();
  const at::Tensor rel = rel_index.contiguous();
  at::Tensor grad_c2p = want_c2p ? at::empty({B, H, N, span}, grad.options()) : at::Tensor();
  at::Tensor grad_p2c = want_p2c ? at::empty({B, H, N, span}, grad.options()) : at::Tensor();
  if (B * H * N * span == 0 || !(want_c2p || want_p2c)) {
    if (want_c2p) grad_c2p.zero_();
    if (want_p2c) grad_p2c.zero_();
    return {grad_c2p, grad_p2c};
  }
  // c2p: row i of the score gradient sums into row i of grad_c2p; p2c:
  // column j sums into row j of grad_p2c.
  if (want_c2p) scatter_rows(grad, rel, span, scale, grad_c2p);
  if (want_p2c) scatter_columns(grad, rel, span, scale, grad_p2c);
  return {grad_c2p, grad_p2c};
}

}  // namespace

}  // namespace mtbert::ops

TORCH_LIBRARY_IMPL(mtbert, CPU, m) {
  m.impl("disentangled_scores", &mtbert::ops::forward_cpu);
  m.impl("disentangled_scores_backward", &mtbert::ops::backward_cpu);
}
