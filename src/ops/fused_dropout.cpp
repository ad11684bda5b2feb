#include "ops/fused_dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <mutex>

namespace mtbert::ops {

namespace {

// SplitMix64's output function (Steele, Lea, Flood 2014): applied to
// seed + k * golden it is the SplitMix64 stream, whose 64-bit outputs pass
// BigCrush.
inline uint64_t splitmix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
// Pairs of elements per task of at::parallel_for (below it: one thread).
constexpr int64_t kGrainPairs = 16384;

uint64_t draw_seed() {
  auto* gen = at::get_generator_or_default<at::CPUGeneratorImpl>(c10::nullopt, at::detail::getDefaultCPUGenerator());
  std::lock_guard<std::mutex> lock(gen->mutex_);
  return gen->random64();
}

// An element is dropped when its 32 random bits fall below p * 2^32.
uint32_t drop_threshold(double p) {
  const double t = std::floor(p * 4294967296.0);
  return t >= 4294967295.0 ? 4294967295u : static_cast<uint32_t>(t);
}

// out[i] = keep[i] ? x[i] * scale : 0, keep[i] from bits (seed, i).
template <typename scalar_t>
void forward_kernel(const scalar_t* x, scalar_t* out, bool* keep, int64_t n, uint64_t seed, uint32_t threshold,
                    at::opmath_type<scalar_t> scale) {
  using acc_t = at::opmath_type<scalar_t>;
  at::parallel_for(0, (n + 1) / 2, kGrainPairs, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const uint64_t bits = splitmix64(seed + static_cast<uint64_t>(k + 1) * kGolden);
      const int64_t first = 2 * k;
      const int64_t count = std::min<int64_t>(2, n - first);
      for (int64_t h = 0; h < count; ++h) {
        const int64_t i = first + h;
        const bool kept = static_cast<uint32_t>(bits >> (32 * h)) >= threshold;
        keep[i] = kept;
        out[i] = kept ? static_cast<scalar_t>(static_cast<acc_t>(x[i]) * scale) : scalar_t(0);
      }
    }
  });
}

template <typename scalar_t>
void backward_kernel(const scalar_t* grad, const bool* keep, scalar_t* out, int64_t n, at::opmath_type<scalar_t> scale) {
  using acc_t = at::opmath_type<scalar_t>;
  at::parallel_for(0, n, 2 * kGrainPairs, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      out[i] = keep[i] ? static_cast<scalar_t>(static_cast<acc_t>(grad[i]) * scale) : scalar_t(0);
  });
}

// LibTorch's scale: the float mask divided by 1 - p, i.e. 1 / (1 - p) rounded
// to the dtype's math type.
double keep_scale(double p) { return 1.0 / (1.0 - p); }

class FusedDropoutFunction : public torch::autograd::Function<FusedDropoutFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input, double p) {
    const at::Tensor x = input.contiguous();
    at::Tensor out = at::empty_like(x, at::MemoryFormat::Contiguous);
    at::Tensor keep = at::empty(x.sizes(), x.options().dtype(at::kBool), at::MemoryFormat::Contiguous);
    const uint64_t seed = draw_seed();
    const uint32_t threshold = drop_threshold(p);
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "fused_dropout", [&] {
      forward_kernel<scalar_t>(x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), keep.data_ptr<bool>(), x.numel(),
                               seed, threshold, static_cast<at::opmath_type<scalar_t>>(keep_scale(p)));
    });
    ctx->save_for_backward({keep});
    ctx->saved_data["p"] = p;
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor keep = ctx->get_saved_variables()[0];
    const double p = ctx->saved_data["p"].toDouble();
    const at::Tensor& grad = grads[0];
    if (torch::autograd::GradMode::is_enabled()) {
      // A graph of this gradient is being built (create_graph): plain ops.
      return {grad * keep.to(grad.scalar_type()) * keep_scale(p), at::Tensor()};
    }
    const at::Tensor g = grad.contiguous();
    at::Tensor out = at::empty_like(g, at::MemoryFormat::Contiguous);
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, g.scalar_type(), "fused_dropout_backward", [&] {
      backward_kernel<scalar_t>(g.data_ptr<scalar_t>(), keep.data_ptr<bool>(), out.data_ptr<scalar_t>(), g.numel(),
                                static_cast<at::opmath_type<scalar_t>>(keep_scale(p)));
    });
    return {out, at::Tensor()};
  }
};

}  // namespace

at::Tensor fused_dropout(const at::Tensor& x, double p, bool training) {
  TORCH_CHECK(p >= 0 && p <= 1, "fused_dropout: p must be in [0, 1], got ", p);
  if (!training || p == 0) return x;
  if (!x.device().is_cpu()) return torch::dropout(x, p, training);
  if (p == 1) return x * 0;
  if (x.numel() == 0) return x.clone();
  return FusedDropoutFunction::apply(x, p);
}

}  // namespace mtbert::ops
