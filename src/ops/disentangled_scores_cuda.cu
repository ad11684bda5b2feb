// CUDA kernels of mtbert::disentangled_scores (see disentangled_scores.h); their
// CPU twins are in disentangled_scores_cpu.cpp, the pieces both share in
// disentangled_scores_views.h.
//
// Forward: one thread per score, reading both GEMM results through the
// distance table (and p2p by distance). Backward: each gradient slot
// [b,h,i,r] (and [b,h,j,r]) is one thread summing, in a fixed order, the
// scores whose distance maps to row r, found through the plan's order and
// offsets (relative_plan.h): no atomics, so the result is deterministic like
// the CPU kernel's. p2p's gradient: one thread per (head, distance), summing
// over the batch and the rows in order. Everything per length (the table, the
// windows, the order) is on the device in the plan: a call copies nothing and
// never waits for the GPU.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>

#include "ops/disentangled_scores_backends.h"
#include "ops/disentangled_scores_checks.h"

namespace mtbert::ops::detail {

namespace {

template <typename scalar_t>
__global__ void scores_forward_kernel(const scalar_t* __restrict__ content, ScoreStrides cs,
                                      TermView<const scalar_t> c2p, TermView<const scalar_t> p2c,
                                      DistanceView<const scalar_t> p2p, const scalar_t* __restrict__ bias,
                                      ScoreStrides bs, const int64_t* __restrict__ rel, int64_t heads, int64_t n,
                                      acc_t<scalar_t> scale, scalar_t* __restrict__ out, int64_t total) {
  using acc = acc_t<scalar_t>;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t j = idx % n, i = (idx / n) % n, h = (idx / (n * n)) % heads, b = idx / (n * n * heads);
    const int64_t r = rel[i - j + n - 1];  // in both windows: the plan's band holds every row
    const acc position = static_cast<acc>(c2p.head(b, h)[c2p.row_base(i) + r * c2p.column_stride]) +
                         static_cast<acc>(p2c.head(b, h)[p2c.row_base(j) + r * p2c.column_stride]) +
                         static_cast<acc>(p2p.data[h * p2p.head_stride + (i - j + n - 1) * p2p.distance_stride]);
    const acc v = static_cast<acc>(content[b * cs.s0 + h * cs.s1 + i * cs.s2 + j * cs.s3]) + scale * position +
                  static_cast<acc>(bias[b * bs.s0 + h * bs.s1 + i * bs.s2 + j * bs.s3]);
    out[idx] = saturate<scalar_t>(v);
  }
}

// One thread per gradient slot (b, h, layout row p, window column w) of a
// term, r = first_row(p) + w: scale * the sum, over the distances of row r in
// increasing order, of grad[b,h,p,j] (c2p: p is the query) or grad[b,h,i,p]
// (p2c: p is the key). Padding rows (p >= n) get 0.
template <typename scalar_t, bool kContentToPosition>
__global__ void position_grad_kernel(const scalar_t* __restrict__ grad, const int64_t* __restrict__ order,
                                     const int64_t* __restrict__ offsets, int64_t span, int64_t heads, int64_t n,
                                     TermView<scalar_t> out, acc_t<scalar_t> scale, int64_t total) {
  using acc = acc_t<scalar_t>;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t w = idx % out.width, pos = (idx / out.width) % out.rows, bh = idx / (out.width * out.rows);
    const int64_t r = out.first_row(pos) + w;
    const scalar_t* g = grad + bh * n * n;
    acc sum = 0;
    if (pos < n && r < span) {
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
    }
    out.head(bh / heads, bh % heads)[out.row_base(pos) + r * out.column_stride] = static_cast<scalar_t>(scale * sum);
  }
}

// One thread per p2p gradient slot (h, distance index k): scale * the sum of
// grad[b,h,i,i - d] (d = k - (n - 1)) over b, then i, in increasing order.
template <typename scalar_t>
__global__ void distance_grad_kernel(const scalar_t* __restrict__ grad, int64_t batch, int64_t heads, int64_t n,
                                     acc_t<scalar_t> scale, DistanceView<scalar_t> out) {
  using acc = acc_t<scalar_t>;
  const int64_t distances = 2 * n - 1;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < heads * distances;
       idx += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t h = idx / distances, k = idx % distances, d = k - (n - 1);
    const int64_t i0 = d > 0 ? d : 0, i1 = d < 0 ? n + d : n;
    acc sum = 0;
    for (int64_t b = 0; b < batch; ++b) {
      const scalar_t* g = grad + (b * heads + h) * n * n;
      for (int64_t i = i0; i < i1; ++i) sum += static_cast<acc>(g[i * n + (i - d)]);
    }
    out.data[h * out.head_stride + k * out.distance_stride] = static_cast<scalar_t>(scale * sum);
  }
}

constexpr int kThreads = 256;

int64_t blocks_for(int64_t total) {
  return std::max<int64_t>(1, std::min<int64_t>((total + kThreads - 1) / kThreads, 65535LL * 8));
}

}  // namespace

at::Tensor forward_cuda(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                        const RelativePlanPtr& plan, double scale, const OptTensor& bias, const OptTensor& p2p) {
  const ScoreShape s = check_forward_args(content, c2p, p2c, plan, bias, p2p);
  const c10::cuda::CUDAGuard device_guard(content.device());
  const int64_t B = s.batch, H = s.heads, N = s.length;
  at::Tensor out = at::empty({B, H, N, N}, content.options());
  const int64_t total = out.numel();
  if (total == 0) return out;
  const at::Tensor zero = at::zeros({1}, content.options());
  const auto stream = at::cuda::getCurrentCUDAStream();

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, content.scalar_type(), "disentangled_scores_cuda", [&] {
    const scalar_t* zero_ptr = zero.data_ptr<scalar_t>();
    scores_forward_kernel<scalar_t><<<blocks_for(total), kThreads, 0, stream>>>(
        content.data_ptr<scalar_t>(), score_strides(content),
        term_view<const scalar_t>(c2p, *plan, /*by_query=*/true, zero_ptr),
        term_view<const scalar_t>(p2c, *plan, /*by_query=*/false, zero_ptr),
        distance_view<const scalar_t>(p2p, zero_ptr), present(bias) ? bias->data_ptr<scalar_t>() : zero_ptr,
        score_strides(bias, {B, H, N, N}), plan->index().data_ptr<int64_t>(), H, N,
        static_cast<acc_t<scalar_t>>(scale), out.data_ptr<scalar_t>(), total);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

void backward_cuda(const at::Tensor& grad_in, const RelativePlanPtr& plan, double scale, const OptTensor& grad_c2p,
                   const OptTensor& grad_p2c, const OptTensor& grad_p2p) {
  const ScoreShape s = check_backward_args(grad_in, plan, grad_c2p, grad_p2c, grad_p2p);
  const c10::cuda::CUDAGuard device_guard(grad_in.device());
  const int64_t N = s.length;
  if (s.batch * s.heads == 0 || N == 0) return;
  const at::Tensor grad = grad_in.contiguous();
  const auto stream = at::cuda::getCurrentCUDAStream();

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, grad.scalar_type(), "disentangled_scores_backward_cuda",
                                  [&] {
    const auto sc = static_cast<acc_t<scalar_t>>(scale);
    const scalar_t* g = grad.data_ptr<scalar_t>();
    if (present(grad_p2p)) {
      distance_grad_kernel<scalar_t><<<blocks_for(s.heads * (2 * N - 1)), kThreads, 0, stream>>>(
          g, s.batch, s.heads, N, sc, distance_view<scalar_t>(grad_p2p, nullptr));
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    auto launch = [&](const OptTensor& out, auto by_query) {
      if (!present(out)) return;
      const TermView<scalar_t> view = term_view<scalar_t>(out, *plan, decltype(by_query)::value, nullptr);
      const int64_t total = s.batch * s.heads * view.rows * view.width;
      if (total == 0) return;
      position_grad_kernel<scalar_t, decltype(by_query)::value><<<blocks_for(total), kThreads, 0, stream>>>(
          g, plan->order().data_ptr<int64_t>(), plan->offsets().data_ptr<int64_t>(), plan->span(), s.heads, N, view,
          sc, total);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    };
    launch(grad_c2p, std::true_type{});
    launch(grad_p2c, std::false_type{});
  });
}

}  // namespace mtbert::ops::detail
