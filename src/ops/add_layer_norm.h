#pragma once
// The residual connection and LayerNorm of a post-LN transformer layer in one
// pass per row, `mtbert::ops::add_layer_norm`.
//
// Every BERT layer ends its attention and feed-forward blocks with
// LayerNorm(dropout(dense(x)) + residual). With LibTorch's operators the sum
// is its own pass over [B, N, H] before LayerNorm reads it again (and
// outside training the dense layer's bias is one more). Here each row's sum,
// mean, variance and normalized output are computed while the row sits in
// L1 (rows are at most a few KB), and backward produces the gradient of the
// sum and the per-feature gradients of gamma, beta (and the bias) in one
// pass, summing the per-feature terms per block of rows and the blocks in
// order, so they do not depend on the thread count.
//
// float and double on CPU, and x in bf16 beside a float residual and float
// parameters (a GEMM's output under autocast, where LayerNorm runs in float):
// the sum and the output are float, x widened as it is read. Anything else
// takes LibTorch's operators, as does backward when a graph of the gradient
// is being built.
#include <ATen/core/Tensor.h>

namespace mtbert::ops {

// LayerNorm(x + bias + residual) over the last dimension H: x and residual
// [..., H]; bias (optional: an undefined tensor), weight (gamma) and beta [H].
// The result has the residual's dtype.
at::Tensor add_layer_norm(const at::Tensor& x, const at::Tensor& bias, const at::Tensor& residual,
                          const at::Tensor& weight, const at::Tensor& beta, double eps);

}  // namespace mtbert::ops
