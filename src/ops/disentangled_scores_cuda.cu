// CUDA kernels of mtbert::disentangled_scores (see disentangled_scores.h).
//
// Forward: one thread per score, reading both GEMM results through the
// distance table. Backward: each gradient slot [b,h,i,r] (and [b,h,j,r]) is
// one thread summing, in a fixed order, the scores whose distance maps to
// row r. The distances of each row come from a small table (the 2N - 1
// distances sorted stably by row, with the offsets of each row), built per
// call with ATen ops on the device: no atomics, so the result is
// deterministic like the CPU kernel's.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/macros/Macros.h>
#include <torch/library.h>

#include <algorithm>
#include <type_traits>

#include "ops/disentangled_scores_checks.h"

namespace mtbert::ops {

namespace {

using OptTensor = c10::optional<at::Tensor>;

template <typename scalar_t>
using acc_t = std::conditional_t<std::is_same<scalar_t, double>::value, double, float>;

struct Strides {
  int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
};

Strides strides_of(const at::Tensor& t) {
  if (t.dim() != 4) return {};  // the single zero of an absent operand
  return {t.stride(0), t.stride(1), t.stride(2), t.stride(3)};
}

// Largest finite value of the reduced-precision dtypes: results saturate there
// (see the header); float and double pass through.
template <typename scalar_t>
struct Saturation {
  static constexpr float limit = 0.0f;
};
template <>
struct Saturation<c10::Half> {
  static constexpr float limit = 65504.0f;
};
template <>
struct Saturation<c10::BFloat16> {
  static constexpr float limit = 3.38953139e38f;
};

template <typename scalar_t>
__device__ __forceinline__ scalar_t saturate(acc_t<scalar_t> v) {
  constexpr float limit = Saturation<scalar_t>::limit;
  if (limit > 0.0f) {
    if (v > limit) v = limit;
    else if (v < -limit) v = -limit;
  }
  return static_cast<scalar_t>(v);
}

template <typename scalar_t>
__global__ void scores_forward_kernel(const scalar_t* __restrict__ content, Strides cs,
                                      const scalar_t* __restrict__ c2p, Strides ps,
                                      const scalar_t* __restrict__ p2c, Strides qs,
                                      const scalar_t* __restrict__ bias, Strides bs,
                                      const int64_t* __restrict__ rel, int64_t heads, int64_t n, int64_t span,
                                      acc_t<scalar_t> scale, scalar_t* __restrict__ out, int64_t total) {
  using acc = acc_t<scalar_t>;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t j = idx % n, i = (idx / n) % n, h = (idx / (n * n)) % heads, b = idx / (n * n * heads);
    const int64_t r = rel[i - j + n - 1];
    CUDA_KERNEL_ASSERT(span == 0 || (r >= 0 && r < span));
    const acc position = static_cast<acc>(c2p[b * ps.s0 + h * ps.s1 + i * ps.s2 + r * ps.s3]) +
                         static_cast<acc>(p2c[b * qs.s0 + h * qs.s1 + j * qs.s2 + r * qs.s3]);
    const acc v = static_cast<acc>(content[b * cs.s0 + h * cs.s1 + i * cs.s2 + j * cs.s3]) + scale * position +
                  static_cast<acc>(bias[b * bs.s0 + h * bs.s1 + i * bs.s2 + j * bs.s3]);
    out[idx] = saturate<scalar_t>(v);
  }
}

// grad_c2p[b,h,i,r] = scale * sum over distances t of row r of grad[b,h,i,j(t)];
// grad_p2c[b,h,j,r] = scale * sum over distances t of row r of grad[b,h,i(t),j].
template <typename scalar_t, bool kContentToPosition>
__global__ void position_grad_kernel(const scalar_t* __restrict__ grad, const int64_t* __restrict__ order,
                                     const int64_t* __restrict__ offsets, int64_t n, int64_t span,
                                     acc_t<scalar_t> scale, scalar_t* __restrict__ out, int64_t total) {
  using acc = acc_t<scalar_t>;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t r = idx % span, pos = (idx / span) % n, bh = idx / (span * n);
    const scalar_t* g = grad + bh * n * n;
    acc sum = 0;
    for (int64_t s = offsets[r]; s < offsets[r + 1]; ++s) {
      const int64_t distance = order[s] - (n - 1);  // i - j
      if (kContentToPosition) {
        const int64_t j = pos - distance;
        if (j >= 0 && j < n) sum += static_cast<acc>(g[pos * n + j]);
      } else {
        const int64_t i = pos + distance;
        if (i >= 0 && i < n) sum += static_cast<acc>(g[i * n + pos]);
      }
    }
    out[idx] = static_cast<scalar_t>(scale * sum);
  }
}

int64_t blocks_for(int64_t total, int threads) {
  return std::max<int64_t>(1, std::min<int64_t>((total + threads - 1) / threads, 65535LL * 8));
}

at::Tensor forward_cuda(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                        const at::Tensor& rel_index, double scale, const OptTensor& bias) {
  const detail::ScoreShape s = detail::check_forward_args(content, c2p, p2c, rel_index, bias);
  const c10::cuda::CUDAGuard device_guard(content.device());
  const int64_t B = s.batch, H = s.heads, N = s.length;
  at::Tensor out = at::empty({B, H, N, N}, content.options());
  const int64_t total = out.numel();
  if (total == 0) return out;
  const at::Tensor zero = at::zeros({1}, content.options());
  const at::Tensor c2p_t = detail::present(c2p) ? *c2p : zero;
  const at::Tensor p2c_t = detail::present(p2c) ? *p2c : zero;
  const at::Tensor bias_t = detail::present(bias) ? bias->expand({B, H, N, N}) : zero;
  const at::Tensor rel = rel_index.contiguous();
  constexpr int kThreads = 256;
  const auto stream = at::cuda::getCurrentCUDAStream();

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, content.scalar_type(), "disentangled_scores_cuda", [&] {
    scores_forward_kernel<scalar_t><<<blocks_for(total, kThreads), kThreads, 0, stream>>>(
        content.data_ptr<scalar_t>(), strides_of(content), c2p_t.data_ptr<scalar_t>(), strides_of(c2p_t),
        p2c_t.data_ptr<scalar_t>(), strides_of(p2c_t), bias_t.data_ptr<scalar_t>(), strides_of(bias_t),
        rel.data_ptr<int64_t>(), H, N, s.span, static_cast<acc_t<scalar_t>>(scale), out.data_ptr<scalar_t>(),
        total);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

std::tuple<at::Tensor, at::Tensor> backward_cuda(const at::Tensor& grad_in, const at::Tensor& rel_index,
                                                 int64_t span, double scale, bool want_c2p, bool want_p2c) {
  TORCH_CHECK(grad_in.dim() == 4 && grad_in.size(2) == grad_in.size(3),
              "disentangled_scores_backward: grad must be [B, H, N, N], got ", grad_in.sizes());
  const c10::cuda::CUDAGuard device_guard(grad_in.device());
  const int64_t B = grad_in.size(0), H = grad_in.size(1), N = grad_in.size(2);
  TORCH_CHECK(rel_index.dim() == 1 && rel_index.size(0) == std::max<int64_t>(2 * N - 1, 0) &&
                  rel_index.scalar_type() == at::kLong,
              "disentangled_scores_backward: rel_index must be int64 [2N - 1]");
  const at::Tensor grad = grad_in.contiguous();
  at::Tensor grad_c2p = want_c2p ? at::empty({B, H, N, span}, grad.options()) : at::Tensor();
  at::Tensor grad_p2c = want_p2c ? at::empty({B, H, N, span}, grad.options()) : at::Tensor();
  const int64_t total = B * H * N * span;
  if (total == 0) return {grad_c2p, grad_p2c};

  // The distances of each relative row, in increasing order of distance.
  const auto sorted = at::sort(rel_index, /*stable=*/true, /*dim=*/0, /*descending=*/false);
  const at::Tensor order = std::get<1>(sorted).contiguous();
  const at::Tensor offsets =
      at::searchsorted(std::get<0>(sorted).contiguous(), at::arange(span + 1, rel_index.options()));
  constexpr int kThreads = 256;
  const auto stream = at::cuda::getCurrentCUDAStream();

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, grad.scalar_type(), "disentangled_scores_backward_cuda",
                                  [&] {
    const auto sc = static_cast<acc_t<scalar_t>>(scale);
    if (want_c2p) {
      position_grad_kernel<scalar_t, true><<<blocks_for(total, kThreads), kThreads, 0, stream>>>(
          grad.data_ptr<scalar_t>(), order.data_ptr<int64_t>(), offsets.data_ptr<int64_t>(), N, span, sc,
          grad_c2p.data_ptr<scalar_t>(), total);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    if (want_p2c) {
      position_grad_kernel<scalar_t, false><<<blocks_for(total, kThreads), kThreads, 0, stream>>>(
          grad.data_ptr<scalar_t>(), order.data_ptr<int64_t>(), offsets.data_ptr<int64_t>(), N, span, sc,
          grad_p2c.data_ptr<scalar_t>(), total);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
  });
  return {grad_c2p, grad_p2c};
}

}  // namespace

}  // namespace mtbert::ops

TORCH_LIBRARY_IMPL(mtbert, CUDA, m) {
  m.impl("disentangled_scores", &mtbert::ops::forward_cuda);
  m.impl("disentangled_scores_backward", &mtbert::ops::backward_cuda);
}
