// CUDA kernels of mtbert::disentangled_scores (see disentangled_scores.h).
//
// Forward: one thread per score, reading both GEMM results through the
// distance table (and p2p by distance). Backward: each gradient slot
// [b,h,i,r] (and [b,h,j,r]) is one thread summing, in a fixed order, the
// scores whose distance maps to row r. The distances of each row come from a
// small table (the 2N - 1 distances sorted stably by row, with the offsets of
// each row), built per call with ATen ops on the device: no atomics, so the
// result is deterministic like the CPU kernel's. p2p's gradient: one thread
// per (head, distance), summing over the batch and the rows in order.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/macros/Macros.h>
#include <torch/library.h>

#include <algorithm>
#include <mutex>
#include <type_traits>
#include <vector>

#include "ops/disentangled_scores_checks.h"

namespace mtbert::ops {

namespace {

using OptTensor = c10::optional<at::Tensor>;

template <typename scalar_t>
using acc_t = std::conditional_t<std::is_same<scalar_t, double>::value, double, float>;

struct Strides {
  int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
};  // of content and bias

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

// A position term on the device: its data, (b, h) strides, the column
// stride, and per layout row the address of relative row 0 (`base`) and the
// first row its window holds (`first`); see detail::TermLayout.
template <typename scalar_t>
struct Term {
  const scalar_t* data;
  int64_t batch_stride, head_stride, column_stride, width;
  const int64_t* base;
  const int64_t* first;
};

// The per-row tables of a layout, copied to the device from pinned memory:
// asynchronous, so the host queues on without waiting for the GPU.
std::pair<at::Tensor, at::Tensor> row_tables(const detail::TermLayout& l, const at::Device& device) {
  auto to_device = [&](const std::vector<int64_t>& v) {
    return at::tensor(v, at::TensorOptions().dtype(at::kLong)).pin_memory().to(device, /*non_blocking=*/true);
  };
  return {to_device(l.row_base), to_device(l.row_first)};
}

// Every score's relative row must fall in its row's window
// (detail::check_windows, as on the CPU: a catchable error, where a device
// assertion would poison the CUDA context and end the process). The check
// reads rel_index on the host, so it is made once per index tensor and
// layout, not per call: the model builds each length's index and bands once
// (RelativePositionCache), so a run copies each index to the host once.
void check_windows_once(const at::Tensor& rel_index, int64_t n, const detail::TermLayout& c2p,
                        const detail::TermLayout& p2c) {
  struct Checked {
    at::Tensor index;  // held, so that its address cannot be reused by another
    int64_t version;
    std::vector<int64_t> c2p_first, p2c_first;
    int64_t c2p_width, p2c_width;
  };
  static std::mutex mutex;
  static std::vector<Checked> checked;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& c : checked)
    if (c.index.is_same(rel_index) && c.version == rel_index._version() && c.c2p_first == c2p.row_first &&
        c.p2c_first == p2c.row_first && c.c2p_width == c2p.width && c.p2c_width == p2c.width)
      return;
  const at::Tensor host = rel_index.to(at::kCPU).contiguous();
  detail::check_windows(host.data_ptr<int64_t>(), n, c2p, p2c);
  if (checked.size() >= 64) checked.clear();
  checked.push_back({rel_index, rel_index._version(), c2p.row_first, p2c.row_first, c2p.width, p2c.width});
}

// p2p on the device: p2p[h, i - j + n - 1] at h * head_stride + (i - j + n -
// 1) * distance_stride (a single zero with zero strides when absent).
template <typename scalar_t>
struct Distances {
  const scalar_t* data;
  int64_t head_stride, distance_stride;
};

template <typename scalar_t>
Term<scalar_t> device_term(const OptTensor& t, const at::Tensor& zero, const detail::TermLayout& l,
                           const std::pair<at::Tensor, at::Tensor>& tables) {
  return {detail::present(t) ? t->data_ptr<scalar_t>() : zero.data_ptr<scalar_t>(),
          l.batch_stride,
          l.head_stride,
          l.column_stride,
          l.width,
          tables.first.data_ptr<int64_t>(),
          tables.second.data_ptr<int64_t>()};
}

template <typename scalar_t>
__global__ void scores_forward_kernel(const scalar_t* __restrict__ content, Strides cs, Term<scalar_t> c2p,
                                      Term<scalar_t> p2c, Distances<scalar_t> p2p,
                                      const scalar_t* __restrict__ bias, Strides bs,
                                      const int64_t* __restrict__ rel, int64_t heads, int64_t n,
                                      acc_t<scalar_t> scale, scalar_t* __restrict__ out, int64_t total) {
  using acc = acc_t<scalar_t>;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t j = idx % n, i = (idx / n) % n, h = (idx / (n * n)) % heads, b = idx / (n * n * heads);
    const int64_t r = rel[i - j + n - 1];  // in both windows: check_windows_once
    const acc position =
        static_cast<acc>(c2p.data[b * c2p.batch_stride + h * c2p.head_stride + c2p.base[i] + r * c2p.column_stride]) +
        static_cast<acc>(p2c.data[b * p2c.batch_stride + h * p2c.head_stride + p2c.base[j] + r * p2c.column_stride]) +
        static_cast<acc>(p2p.data[h * p2p.head_stride + (i - j + n - 1) * p2p.distance_stride]);
    const acc v = static_cast<acc>(content[b * cs.s0 + h * cs.s1 + i * cs.s2 + j * cs.s3]) + scale * position +
                  static_cast<acc>(bias[b * bs.s0 + h * bs.s1 + i * bs.s2 + j * bs.s3]);
    out[idx] = saturate<scalar_t>(v);
  }
}

// One thread per gradient slot (b, h, layout row p, window column w) of a
// term, r = first[p] + w: scale * the sum, over the distances of row r in
// increasing order, of grad[b,h,p,j] (c2p: p is the query) or grad[b,h,i,p]
// (p2c: p is the key). Padding rows (p >= n) get 0.
template <typename scalar_t, bool kContentToPosition>
__global__ void position_grad_kernel(const scalar_t* __restrict__ grad, const int64_t* __restrict__ order,
                                     const int64_t* __restrict__ offsets, int64_t span, int64_t heads, int64_t n,
                                     int64_t rows, Term<scalar_t> term, acc_t<scalar_t> scale,
                                     scalar_t* __restrict__ out, int64_t total) {
  using acc = acc_t<scalar_t>;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t w = idx % term.width, pos = (idx / term.width) % rows, bh = idx / (term.width * rows);
    const int64_t r = term.first[pos] + w;
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
    out[(bh / heads) * term.batch_stride + (bh % heads) * term.head_stride + term.base[pos] +
        r * term.column_stride] = static_cast<scalar_t>(scale * sum);
  }
}

// One thread per p2p gradient slot (h, distance index k): scale * the sum of
// grad[b,h,i,i - d] (d = k - (n - 1)) over b, then i, in increasing order.
template <typename scalar_t>
__global__ void distance_grad_kernel(const scalar_t* __restrict__ grad, int64_t batch, int64_t heads, int64_t n,
                                     acc_t<scalar_t> scale, scalar_t* __restrict__ out, int64_t head_stride,
                                     int64_t distance_stride) {
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
    out[h * head_stride + k * distance_stride] = static_cast<scalar_t>(scale * sum);
  }
}

int64_t blocks_for(int64_t total, int threads) {
  return std::max<int64_t>(1, std::min<int64_t>((total + threads - 1) / threads, 65535LL * 8));
}

at::Tensor forward_cuda(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                        const at::Tensor& rel_index, double scale, const OptTensor& bias, at::IntArrayRef c2p_first,
                        at::IntArrayRef p2c_first, const OptTensor& p2p) {
  detail::ScoreShape s = detail::check_forward_args(content, c2p, p2c, rel_index, bias, p2p);
  const auto layouts = detail::term_layouts(s, c2p, c2p_first, p2c, p2c_first);
  const detail::DistanceLayout distances = detail::distance_layout(p2p, "p2p", s.heads, s.length);
  const c10::cuda::CUDAGuard device_guard(content.device());
  const int64_t B = s.batch, H = s.heads, N = s.length;
  at::Tensor out = at::empty({B, H, N, N}, content.options());
  const int64_t total = out.numel();
  if (total == 0) return out;
  const at::Tensor zero = at::zeros({1}, content.options());
  const at::Tensor bias_t = detail::present(bias) ? bias->expand({B, H, N, N}) : zero;
  const at::Tensor rel = rel_index.contiguous();
  check_windows_once(rel_index, N, layouts.first, layouts.second);
  const auto c2p_tables = row_tables(layouts.first, content.device());
  const auto p2c_tables = row_tables(layouts.second, content.device());
  constexpr int kThreads = 256;
  const auto stream = at::cuda::getCurrentCUDAStream();

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, content.scalar_type(), "disentangled_scores_cuda", [&] {
    scores_forward_kernel<scalar_t><<<blocks_for(total, kThreads), kThreads, 0, stream>>>(
        content.data_ptr<scalar_t>(), strides_of(content),
        device_term<scalar_t>(c2p, zero, layouts.first, c2p_tables),
        device_term<scalar_t>(p2c, zero, layouts.second, p2c_tables),
        Distances<scalar_t>{detail::present(p2p) ? p2p->data_ptr<scalar_t>() : zero.data_ptr<scalar_t>(),
                            distances.head_stride, distances.distance_stride},
        bias_t.data_ptr<scalar_t>(),
        strides_of(bias_t), rel.data_ptr<int64_t>(), H, N, static_cast<acc_t<scalar_t>>(scale),
        out.data_ptr<scalar_t>(), total);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

void backward_cuda(const at::Tensor& grad_in, const at::Tensor& rel_index, double scale, const OptTensor& grad_c2p,
                   at::IntArrayRef c2p_first, const OptTensor& grad_p2c, at::IntArrayRef p2c_first,
                   const OptTensor& grad_p2p) {
  TORCH_CHECK(grad_in.dim() == 4 && grad_in.size(2) == grad_in.size(3),
              "disentangled_scores_backward: grad must be [B, H, N, N], got ", grad_in.sizes());
  const c10::cuda::CUDAGuard device_guard(grad_in.device());
  detail::ScoreShape s{grad_in.size(0), grad_in.size(1), grad_in.size(2), 0};
  const int64_t N = s.length;
  TORCH_CHECK(rel_index.dim() == 1 && rel_index.size(0) == std::max<int64_t>(2 * N - 1, 0) &&
                  rel_index.scalar_type() == at::kLong,
              "disentangled_scores_backward: rel_index must be int64 [2N - 1]");
  const auto layouts = detail::term_layouts(s, grad_c2p, c2p_first, grad_p2c, p2c_first);
  const detail::DistanceLayout distances = detail::distance_layout(grad_p2p, "grad_p2p", s.heads, N);
  const at::Tensor grad = grad_in.contiguous();
  if (s.batch * s.heads == 0 || N == 0) return;
  constexpr int kThreads = 256;
  const auto stream = at::cuda::getCurrentCUDAStream();
  if (distances.present) {
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, grad.scalar_type(), "disentangled_scores_p2p_cuda", [&] {
      distance_grad_kernel<scalar_t><<<blocks_for(s.heads * (2 * N - 1), kThreads), kThreads, 0, stream>>>(
          grad.data_ptr<scalar_t>(), s.batch, s.heads, N, static_cast<acc_t<scalar_t>>(scale),
          grad_p2p->data_ptr<scalar_t>(), distances.head_stride, distances.distance_stride);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    });
  }
  if (s.span == 0) return;

  // The distances of each relative row, in increasing order of distance.
  const auto sorted = at::sort(rel_index, /*stable=*/true, /*dim=*/0, /*descending=*/false);
  const at::Tensor order = std::get<1>(sorted).contiguous();
  const at::Tensor offsets =
      at::searchsorted(std::get<0>(sorted).contiguous(), at::arange(s.span + 1, rel_index.options()));
  const at::Tensor zero = at::zeros({1}, grad.options());

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, grad.scalar_type(), "disentangled_scores_backward_cuda",
                                  [&] {
    const auto sc = static_cast<acc_t<scalar_t>>(scale);
    auto launch = [&](const OptTensor& out, const detail::TermLayout& l, auto by_query) {
      if (!l.present) return;
      const int64_t total = s.batch * s.heads * l.rows * l.width;
      if (total == 0) return;
      const auto tables = row_tables(l, grad.device());
      position_grad_kernel<scalar_t, decltype(by_query)::value><<<blocks_for(total, kThreads), kThreads, 0, stream>>>(
          grad.data_ptr<scalar_t>(), order.data_ptr<int64_t>(), offsets.data_ptr<int64_t>(), s.span, s.heads, N,
          l.rows, device_term<scalar_t>(out, zero, l, tables), sc, out->data_ptr<scalar_t>(), total);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    };
    launch(grad_c2p, layouts.first, std::true_type{});
    launch(grad_p2c, layouts.second, std::false_type{});
  });
}

}  // namespace

}  // namespace mtbert::ops

TORCH_LIBRARY_IMPL(mtbert, CUDA, m) {
  m.impl("disentangled_scores", &mtbert::ops::forward_cuda);
  m.impl("disentangled_scores_backward", &mtbert::ops::backward_cuda);
}
