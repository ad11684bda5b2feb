#include "ops/fused_dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <mutex>

#include "core/vector_clones.h"

namespace mtbert::ops {

namespace {

// SplitMix64's output function (Steele, Lea, Flood 2014): applied to
// seed + k * golden it is the SplitMix64 stream, whose 64-bit outputs pass
// BigCrush.
constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

// Elements are taken in blocks of 2 * kHalfBlock: element j of a block gets
// the low 32 bits of random word j of the block when j < kHalfBlock, else the
// high 32 bits of word j - kHalfBlock. A pure function of (seed, index), and
// contiguous loops the compiler vectorizes. Blocks are also the unit of work
// of at::parallel_for.
constexpr int64_t kHalfBlock = 2048;
constexpr int64_t kBlock = 2 * kHalfBlock;
// Blocks per task of at::parallel_for (fewer: one thread).
constexpr int64_t kGrainBlocks = 4;

// The random words of block `block`: words[j] for j < count.
MTBERT_VECTOR_CLONES
void random_words(uint64_t seed, int64_t block, int64_t count, uint64_t* __restrict words) {
  const uint64_t first = static_cast<uint64_t>(block) * kHalfBlock + 1;
  for (int64_t j = 0; j < count; ++j) {
    uint64_t z = seed + (first + static_cast<uint64_t>(j)) * kGolden;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    words[j] = z ^ (z >> 31);
  }
}

// keep[i] = 32 random bits >= threshold; out[i] = x[i] * (keep[i] ? scale : 0)
// (as LibTorch, which multiplies by the scaled mask: NaN stays NaN).
// The mask is a bool tensor, addressed as bytes (0 or 1): GCC does not
// vectorize loads and stores of bool.
MTBERT_VECTOR_CLONES
void apply_mask_float(const float* __restrict x, float* __restrict out, uint8_t* __restrict keep, int64_t count,
                      const uint64_t* __restrict words, int shift, uint32_t threshold, float scale) {
  for (int64_t j = 0; j < count; ++j) {
    const bool kept = static_cast<uint32_t>(words[j] >> shift) >= threshold;
    keep[j] = kept;
    out[j] = x[j] * (kept ? scale : 0.0f);
  }
}

template <typename scalar_t>
void apply_mask(const scalar_t* x, scalar_t* out, uint8_t* keep, int64_t count, const uint64_t* words, int shift,
                uint32_t threshold, at::opmath_type<scalar_t> scale) {
  using acc_t = at::opmath_type<scalar_t>;
  for (int64_t j = 0; j < count; ++j) {
    const bool kept = static_cast<uint32_t>(words[j] >> shift) >= threshold;
    keep[j] = kept;
    out[j] = static_cast<scalar_t>(static_cast<acc_t>(x[j]) * (kept ? scale : acc_t(0)));
  }
}

template <>
void apply_mask<float>(const float* x, float* out, uint8_t* keep, int64_t count, const uint64_t* words, int shift,
                       uint32_t threshold, float scale) {
  apply_mask_float(x, out, keep, count, words, shift, threshold, scale);
}

MTBERT_VECTOR_CLONES
void masked_scale_float(const float* __restrict grad, const uint8_t* __restrict keep, float* __restrict out,
                        int64_t count, float scale) {
  for (int64_t i = 0; i < count; ++i) out[i] = grad[i] * (keep[i] != 0 ? scale : 0.0f);
}

template <typename scalar_t>
void masked_scale(const scalar_t* grad, const uint8_t* keep, scalar_t* out, int64_t count,
                  at::opmath_type<scalar_t> scale) {
  using acc_t = at::opmath_type<scalar_t>;
  for (int64_t i = 0; i < count; ++i)
    out[i] = static_cast<scalar_t>(static_cast<acc_t>(grad[i]) * (keep[i] != 0 ? scale : acc_t(0)));
}

template <>
void masked_scale<float>(const float* grad, const uint8_t* keep, float* out, int64_t count, float scale) {
  masked_scale_float(grad, keep, out, count, scale);
}

uint8_t* bytes(const at::Tensor& mask) { return reinterpret_cast<uint8_t*>(mask.data_ptr<bool>()); }

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

template <typename scalar_t>
void dropout_forward_kernel(const scalar_t* x, scalar_t* out, uint8_t* keep, int64_t n, uint64_t seed, uint32_t threshold,
                    at::opmath_type<scalar_t> scale) {
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  at::parallel_for(0, blocks, kGrainBlocks, [&](int64_t begin, int64_t end) {
    uint64_t words[kHalfBlock];
    for (int64_t b = begin; b < end; ++b) {
      const int64_t start = b * kBlock;
      const int64_t count = std::min(kBlock, n - start);
      const int64_t low = std::min(kHalfBlock, count), high = count - low;
      random_words(seed, b, low, words);
      apply_mask(x + start, out + start, keep + start, low, words, 0, threshold, scale);
      apply_mask(x + start + low, out + start + low, keep + start + low, high, words, 32, threshold, scale);
    }
  });
}

template <typename scalar_t>
void dropout_backward_kernel(const scalar_t* grad, const uint8_t* keep, scalar_t* out, int64_t n, at::opmath_type<scalar_t> scale) {
  at::parallel_for(0, n, kGrainBlocks * kBlock, [&](int64_t begin, int64_t end) {
    masked_scale(grad + begin, keep + begin, out + begin, end - begin, scale);
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
      dropout_forward_kernel<scalar_t>(x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), bytes(keep), x.numel(),
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
      dropout_backward_kernel<scalar_t>(g.data_ptr<scalar_t>(), bytes(keep), out.data_ptr<scalar_t>(), g.numel(),
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
