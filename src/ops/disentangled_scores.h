#pragma once
// The relative-position op of disentangled attention, `mtbert::disentangled_scores`:
//
//   out[b,h,i,j] = content[b,h,i,j]
//                + scale * (c2p[b,h,i,r(i,j)] + p2c[b,h,j,r(i,j)])
//                + bias[b,h,i,j]                      (bias broadcast, optional)
//   r(i,j)       = rel_index[i - j + N - 1]
//
// content [B,H,N,N] holds the content-to-content scores, c2p = Qc Kr^T and
// p2c = Kc Qr^T [B,H,N,S] the two position GEMMs over the S relative
// embedding rows in use, and rel_index [2N-1] (int64, values in [0, S)) maps
// a distance i - j onto its row: one table per sequence length, since DeBERTa's
// relative positions (clamped or log-bucketed) depend on i - j only. Either
// position term may be absent (pos_att_type). The two gathered [B,H,N,N]
// tensors of the public implementations are never materialised: one pass reads
// both GEMM results and writes the scores. The backward pass sums each score's
// gradient into the [B,H,N,S] gradients of c2p and p2c in a fixed order
// (deterministic), passes it through to content, and sums it to bias's shape.
//
// Dtypes float, double, half and bfloat16 (all inputs alike); half and
// bfloat16 accumulate in float, and their results saturate at the dtype's
// finite extremes instead of overflowing to infinity, so a masked score (bias
// = the dtype's lowest value) never turns into -inf and a fully masked row
// never into NaN. Kernels: CPU (at::parallel_for) and CUDA (when built with
// it). Inputs may be strided views; the output is contiguous.
#include <c10/util/Optional.h>

#include <ATen/core/Tensor.h>

namespace mtbert::ops {

at::Tensor disentangled_scores(const at::Tensor& content, const c10::optional<at::Tensor>& c2p,
                               const c10::optional<at::Tensor>& p2c, const at::Tensor& rel_index, double scale,
                               const c10::optional<at::Tensor>& bias = c10::nullopt);

}  // namespace mtbert::ops
