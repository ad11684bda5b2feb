#pragma once
// Dropout in one pass over the data, `mtbert::ops::fused_dropout`.
//
// LibTorch 1.13's CPU dropout draws its mask element by element from one
// Mersenne Twister on one thread (bernoulli_), then divides the mask by 1 - p
// and multiplies: three passes, a float mask kept for backward, and on a
// 2-core machine about a tenth of a small encoder's training step. Here every
// element's decision is a pure function of (seed, element index): SplitMix64
// of a counter gives 64 random bits for two elements, so the mask is computed
// in parallel and in vector registers, in the same pass that writes the
// output, and comes out the same whatever the thread count. The seed is drawn from LibTorch's
// default CPU generator, so torch::manual_seed makes runs reproducible. The
// mask is kept as one byte per element; backward multiplies the incoming
// gradient by mask / (1 - p) (differentiably when a graph of the gradient is
// being built).
//
// The masks differ from LibTorch's for the same seed (a different generator);
// each element is still kept with probability 1 - p (to within 2^-32) and
// scaled by 1 / (1 - p) as in float arithmetic LibTorch does. CUDA tensors
// go to LibTorch's fused CUDA dropout. Dtypes: float, double, half, bfloat16.
#include <ATen/core/Tensor.h>

namespace mtbert::ops {

// p in [0, 1]. Not training, or p == 0: `x` itself. p == 1: zeros.
at::Tensor fused_dropout(const at::Tensor& x, double p, bool training);

}  // namespace mtbert::ops
