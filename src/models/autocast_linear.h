#pragma once
// A Linear layer's product whose weights autocast casts once, not per call.
//
// Under bf16 autocast LibTorch 1.13's CPU kernels reach the matrix product
// through matmul(x, W.t()), and autocast casts that view of W anew on every
// call (it keeps copies of leaf tensors only). Here the weight and bias are
// cast once and kept by a WeightCastCache (core/autocast_scope.h) for an
// optimizer step or an evaluation pass (frozen weights and InferenceMode
// included); the product then sees bf16 weights and casts nothing but its
// input. Outside autocast, or on float64 / bf16 weights, it is the layer's
// plain product.
#include <torch/nn/modules/linear.h>
#include <torch/types.h>

namespace mtbert {

// scale * (x W^T (+ b with with_bias and a layer that has one)). With a bias
// and a contiguous x, one GEMM on x's rows adds the bias and scales (addmm's
// beta and alpha): LibTorch 1.13's linear on a 3-D input runs matmul and then
// a pass of its own to add the bias, and a scale would take another.
torch::Tensor autocast_linear(const torch::nn::Linear& layer, const torch::Tensor& x, bool with_bias = true,
                              double scale = 1.0);

// w as the products here use it: unchanged outside autocast (or when it is
// not float), else its copy in autocast's dtype, kept by the live
// WeightCastCache if there is one, else autocast's own cast.
torch::Tensor autocast_weight(const torch::Tensor& w);

// The dtype of x's matrix products: autocast's for a float x while autocast
// is on for its device, else x's own.
torch::ScalarType autocast_dtype_of(const torch::Tensor& x);

// x as autocast would cast it for a matrix product (float to its dtype while
// autocast is on for x's device), for an input that several products read
// (the query, key and value projections): cast once, not once per product.
torch::Tensor autocast_input(const torch::Tensor& x);

}  // namespace mtbert
