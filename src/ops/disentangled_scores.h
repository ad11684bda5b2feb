#pragma once
// The relative-position op of disentangled attention, `mtbert::disentangled_scores`:
//
//   out[b,h,i,j] = content[b,h,i,j]
//                + scale * (c2p[b,h,i,r(i,j)] + p2c[b,h,j,r(i,j)] + p2p[h,i - j + N - 1])
//                + bias[b,h,i,j]                      (bias broadcast, optional)
//   r(i,j)       = rel_index[i - j + N - 1]   (the plan's index)
//
// content [B,H,N,N] holds the content-to-content scores, c2p = Qc Kr^T and
// p2c = Kc Qr^T [B,H,N,S] the two position GEMMs over the S relative
// embedding rows in use, and rel_index [2N-1] (int64, values in [0, S)) maps
// a distance i - j onto its row: one table per sequence length, since DeBERTa's
// relative positions (clamped or log-bucketed) depend on i - j only. Any
// position term may be absent (pos_att_type). The two gathered [B,H,N,N]
// tensors of the public implementations are never materialised: one pass reads
// both GEMM results and writes the scores. The backward pass sums each score's
// gradient into the [B,H,N,S] gradients of c2p and p2c in a fixed order
// (deterministic), passes it through to content, and sums it to bias's shape.
//
// p2p [H, 2N - 1], the position-to-position term, is one value per head and
// distance: Qr_row(j,i) . Kr_row(i,j) involves no token, so it depends on
// i - j only and the caller computes it for the 2N - 1 distances (the
// [S, S] product Qr Kr^T is never formed). It reads no row table and no
// band, and combines with full and banded c2p/p2c alike; its gradient is
// summed over the batch and the scores of each distance, in a fixed order.
//
// Relative plan. Everything per sequence length comes in one immutable
// RelativePlan (relative_plan.h): the table of rows (rel_index above), the
// windows of banded terms, and the backward's summation order, validated when
// the plan is made. Callers make one plan per length and keep it (the model
// does: RelativePositionCache); the op keeps nothing between calls.
//
// Banded terms. Query row i of c2p needs the rows r(i, j) of its N keys only,
// N of the up to 2N - 1 (and key row j of p2c likewise): the position GEMMs
// can be computed per tile of T rows against the window of W rows that tile
// needs. A term may then be given as [B, H, tiles, T, W] (tiles * T >= N;
// rows past N are padding), the plan's band naming the first relative row of
// each tile's window:
//
//   c2p[b,h,i,r] = c2p_band[b,h,i / T,i % T, r - plan.c2p_first()[i / T]]
//
// The plan's windows hold every row their tiles use, so nothing is checked
// per call but the shapes; the gradient of a banded term comes back in its
// layout (padding rows zero).
//
// Dtypes float, double, half and bfloat16 (all inputs alike, except under
// autocast, where the terms and the bias are cast to content's dtype); half and
// bfloat16 accumulate in float, and their results saturate at the dtype's
// finite extremes instead of overflowing to infinity, so a masked score (bias
// = the dtype's lowest value) never turns into -inf and a fully masked row
// never into NaN. Kernels: CPU (at::parallel_for) and CUDA (when built with
// it). Inputs may be strided views; the output is contiguous.
#include <c10/util/Optional.h>

#include <ATen/core/Tensor.h>

#include "ops/relative_plan.h"

namespace mtbert::ops {

// Every term is optional; `plan` is required (it gives N even for p2p alone).
// The backward refuses double backward (create_graph through the position
// terms) with an error rather than building no second-order graph.
at::Tensor disentangled_scores(const at::Tensor& content, const c10::optional<at::Tensor>& c2p,
                               const c10::optional<at::Tensor>& p2c, const RelativePlanPtr& plan, double scale,
                               const c10::optional<at::Tensor>& bias = c10::nullopt,
                               const c10::optional<at::Tensor>& p2p = c10::nullopt);

}  // namespace mtbert::ops
