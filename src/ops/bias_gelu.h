#pragma once
// Bias and GELU in one pass over the data, `mtbert::ops::bias_gelu`.
//
// The intermediate layer of every transformer layer is gelu(x W^T + b). With
// LibTorch's Linear that is a GEMM, a pass adding the bias, and a GELU pass;
// backward is a gelu_backward pass and a column sum for the bias gradient.
// Here the GEMM's output x goes straight into one kernel that adds the bias
// and applies GELU, and backward produces the input gradient and the bias
// gradient in one pass (column sums per block of rows, added in block order:
// ops/row_blocks.h).
//
// float runs vectorized (AVX2 / AVX-512 clones) with erf and exp written as
// polynomials the compiler can vectorize: erf by Abramowitz & Stegun 7.1.26
// (absolute error <= 1.5e-7, the approximation ATen's own vectorized GELU
// uses), exp by Cody-Waite range reduction and a degree-7 polynomial. double
// uses std::erfc / std::exp (gradcheck). bf16 activations (what a GEMM gives
// under autocast) with a float bias run the float kernel on widened chunks of
// each row, the output rounded to bf16 once, the bias gradient summed in
// float (ops/bf16_rows.h). Anything else (half, CUDA) takes LibTorch's
// operators, as does backward while a graph of the gradient is being built,
// so results never depend on the path beyond rounding.
#include <ATen/core/Tensor.h>

namespace mtbert::ops {

enum class GeluForm { Erf, Tanh };

// gelu(x + bias): x [..., F], bias [F], the result in x's dtype. Erf: x *
// Phi(x) (HuggingFace's "gelu"); Tanh: the tanh approximation ("gelu_new",
// "gelu_pytorch_tanh").
at::Tensor bias_gelu(const at::Tensor& x, const at::Tensor& bias, GeluForm form);

}  // namespace mtbert::ops
