#include "ops/bias_gelu.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/vector_clones.h"
#include "ops/bf16_rows.h"
#include "ops/row_blocks.h"

namespace mtbert::ops {

namespace {

constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kTanhCubic = 0.044715;

// ---- float: polynomials GCC vectorizes -------------------------------------

// exp(v) for v <= 0 (clamped at -87, where exp is about the smallest normal
// float): v = k ln 2 + r with |r| <= ln(2) / 2, exp(r) by its Taylor
// polynomial of degree 7 (truncation below 6e-9 relative), times 2^k built in
// the exponent bits.
__attribute__((always_inline)) inline float exp_nonpositive(float v) {
  v = v < -87.0f ? -87.0f : v;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float k = (v * 1.44269504088896341f + kRound) - kRound;
  const float r = (v - k * 0.693145751953125f) - k * 1.42860682030941723212e-6f;  // ln 2 in two parts
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(k) + 127) << 23;
  return p * __builtin_bit_cast(float, bits);
}

// Phi(u) = P(U <= u) for a standard normal U, and phi(u) its density, from
// one exp: erf(z) = 1 - T(t) exp(-z^2) with t = 1 / (1 + 0.3275911 z)
// (Abramowitz & Stegun 7.1.26, z = |u| / sqrt 2 >= 0). The lower tail is
// 0.5 T exp(-z^2) itself, not 1 minus something, so it keeps its digits.
struct Normal {
  float cdf, density;
};
__attribute__((always_inline)) inline Normal normal_float(float u) {
  const float z = std::fabs(u) * static_cast<float>(kSqrtHalf);
  const float e = exp_nonpositive(-z * z);
  const float t = 1.0f / (1.0f + 0.3275911f * z);
  const float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  const float tail = 0.5f * poly * e;
  return {u >= 0.0f ? 1.0f - tail : tail, e * static_cast<float>(kInvSqrt2Pi)};
}

// tanh(a) as 1 + tanh(a) and 1 - tanh(a), from e = exp(-2 |a|): the one
// that is near 0 is computed as 2e / (1 + e), not by cancellation.
struct TanhPair {
  float one_plus, one_minus;
};
__attribute__((always_inline)) inline TanhPair tanh_float(float a) {
  const float e = exp_nonpositive(-2.0f * std::fabs(a));
  const float inv = 1.0f / (1.0f + e);
  const float small = 2.0f * e * inv, large = 2.0f * inv;
  return {a >= 0.0f ? large : small, a >= 0.0f ? small : large};
}

__attribute__((always_inline)) inline float tanh_argument(float u) {
  return static_cast<float>(kSqrt2OverPi) * (u + static_cast<float>(kTanhCubic) * u * u * u);
}

MTBERT_VECTOR_CLONES
void forward_erf_float(const float* __restrict x, const float* __restrict bias, float* __restrict y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float u = x[j] + bias[j];
    y[j] = u * normal_float(u).cdf;
  }
}

MTBERT_VECTOR_CLONES
void forward_tanh_float(const float* __restrict x, const float* __restrict bias, float* __restrict y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float u = x[j] + bias[j];
    y[j] = 0.5f * u * tanh_float(tanh_argument(u)).one_plus;
  }
}

// d/du u Phi(u) = Phi(u) + u phi(u)
MTBERT_VECTOR_CLONES
void backward_erf_float(const float* __restrict grad, const float* __restrict x, const float* __restrict bias,
                        float* __restrict grad_x, float* __restrict grad_bias, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float u = x[j] + bias[j];
    const Normal nd = normal_float(u);
    const float g = grad[j] * (nd.cdf + u * nd.density);
    grad_x[j] = g;
    grad_bias[j] += g;
  }
}

// d/du u (1 + tanh a) / 2 = (1 + tanh a) / 2 + u (1 - tanh^2 a) a'(u) / 2
MTBERT_VECTOR_CLONES
void backward_tanh_float(const float* __restrict grad, const float* __restrict x, const float* __restrict bias,
                         float* __restrict grad_x, float* __restrict grad_bias, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float u = x[j] + bias[j];
    const TanhPair th = tanh_float(tanh_argument(u));
    const float slope = static_cast<float>(kSqrt2OverPi) * (1.0f + 3.0f * static_cast<float>(kTanhCubic) * u * u);
    const float g = grad[j] * 0.5f * (th.one_plus + u * th.one_plus * th.one_minus * slope);
    grad_x[j] = g;
    grad_bias[j] += g;
  }
}

// ---- double: the library's functions (gradcheck) ---------------------------

void forward_row(const double* x, const double* bias, double* y, int64_t n, GeluForm form) {
  for (int64_t j = 0; j < n; ++j) {
    const double u = x[j] + bias[j];
    y[j] = form == GeluForm::Erf ? u * 0.5 * std::erfc(-u * kSqrtHalf)
                                 : 0.5 * u * (1.0 + std::tanh(kSqrt2OverPi * (u + kTanhCubic * u * u * u)));
  }
}

void backward_row(const double* grad, const double* x, const double* bias, double* grad_x, double* grad_bias,
                  int64_t n, GeluForm form) {
  for (int64_t j = 0; j < n; ++j) {
    const double u = x[j] + bias[j];
    double d;
    if (form == GeluForm::Erf) {
      d = 0.5 * std::erfc(-u * kSqrtHalf) + u * std::exp(-0.5 * u * u) * kInvSqrt2Pi;
    } else {
      const double th = std::tanh(kSqrt2OverPi * (u + kTanhCubic * u * u * u));
      d = 0.5 * (1.0 + th) + 0.5 * u * (1.0 - th * th) * kSqrt2OverPi * (1.0 + 3.0 * kTanhCubic * u * u);
    }
    grad_x[j] = grad[j] * d;
    grad_bias[j] += grad_x[j];
  }
}

void forward_row(const float* x, const float* bias, float* y, int64_t n, GeluForm form) {
  if (form == GeluForm::Erf) {
    forward_erf_float(x, bias, y, n);
  } else {
    forward_tanh_float(x, bias, y, n);
  }
}

void backward_row(const float* grad, const float* x, const float* bias, float* grad_x, float* grad_bias, int64_t n,
                  GeluForm form) {
  if (form == GeluForm::Erf) {
    backward_erf_float(grad, x, bias, grad_x, grad_bias, n);
  } else {
    backward_tanh_float(grad, x, bias, grad_x, grad_bias, n);
  }
}

// bf16 activations, float bias (a float32 parameter under autocast): each
// chunk of the row widened, through the float kernel, the output rounded
// once; the bias gradient accumulates the unrounded float terms.
void forward_row(const uint16_t* x, const float* bias, uint16_t* y, int64_t n, GeluForm form) {
  float in[kBf16Chunk], out[kBf16Chunk];
  for (int64_t s = 0; s < n; s += kBf16Chunk) {
    const int64_t m = std::min(kBf16Chunk, n - s);
    widen_bf16(x + s, in, m);
    forward_row(in, bias + s, out, m, form);
    narrow_to_bf16(out, y + s, m);
  }
}

void backward_row(const uint16_t* grad, const uint16_t* x, const float* bias, uint16_t* grad_x, float* grad_bias,
                  int64_t n, GeluForm form) {
  float g[kBf16Chunk], in[kBf16Chunk], gx[kBf16Chunk];
  for (int64_t s = 0; s < n; s += kBf16Chunk) {
    const int64_t m = std::min(kBf16Chunk, n - s);
    widen_bf16(grad + s, g, m);
    widen_bf16(x + s, in, m);
    backward_row(g, in, bias + s, gx, grad_bias + s, m, form);
    narrow_to_bf16(gx, grad_x + s, m);
  }
}

// X: the activations' element type (the bias's, or bf16 bits with a float bias).
template <typename X, typename scalar_t>
void bias_gelu_forward_kernel(const X* x, const scalar_t* bias, X* y, int64_t rows, int64_t width, GeluForm form) {
  for_each_row(rows, width, [&](int64_t r) { forward_row(x + r * width, bias, y + r * width, width, form); });
}

template <typename X, typename scalar_t>
void bias_gelu_backward_kernel(const X* grad, const X* x, const scalar_t* bias, X* grad_x, scalar_t* grad_bias, int64_t rows,
                     int64_t width, GeluForm form) {
  for_each_row_summing<scalar_t>(rows, width, {grad_bias}, [&](int64_t r, scalar_t* sums) {
    backward_row(grad + r * width, x + r * width, bias, grad_x + r * width, sums, width, form);
  });
}

// The same function in LibTorch's operators: the fallback, and backward when
// a graph of the gradient is being built.
at::Tensor plain_bias_gelu(const at::Tensor& x, const at::Tensor& bias, GeluForm form) {
  // The bias in the product's dtype, as Linear under autocast.
  return torch::gelu(x + bias.to(x.scalar_type()), form == GeluForm::Erf ? "none" : "tanh");
}

at::Tensor plain_gelu_derivative(const at::Tensor& u, GeluForm form) {
  if (form == GeluForm::Erf) return 0.5 * torch::erfc(-u * kSqrtHalf) + u * torch::exp(-0.5 * u * u) * kInvSqrt2Pi;
  const auto th = torch::tanh(kSqrt2OverPi * (u + kTanhCubic * u * u * u));
  return 0.5 * (1 + th) + 0.5 * u * (1 - th * th) * kSqrt2OverPi * (1 + 3 * kTanhCubic * u * u);
}

class BiasGeluFunction : public torch::autograd::Function<BiasGeluFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input, const at::Tensor& bias,
                            int64_t form_index) {
    const auto form = static_cast<GeluForm>(form_index);
    const at::Tensor x = input.contiguous();
    // bf16 activations take their bias in float (a bf16 bias is widened).
    const bool bf16 = x.scalar_type() == at::kBFloat16;
    const at::Tensor b = bf16 ? bias.to(at::kFloat).contiguous() : bias.contiguous();
    at::Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
    const int64_t width = b.numel();
    if (bf16) {
      bias_gelu_forward_kernel(bf16_bits(x), b.data_ptr<float>(), bf16_bits(y), x.numel() / width, width, form);
    } else {
      AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "bias_gelu", [&] {
        bias_gelu_forward_kernel(x.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), x.numel() / width,
                       width, form);
      });
    }
    ctx->save_for_backward({x, b});
    ctx->saved_data["bias_type"] = static_cast<int64_t>(bias.scalar_type());
    ctx->saved_data["form"] = form_index;
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &b = saved[1];
    const auto form = static_cast<GeluForm>(ctx->saved_data["form"].toInt());
    const auto bias_type = static_cast<at::ScalarType>(ctx->saved_data["bias_type"].toInt());
    if (torch::autograd::GradMode::is_enabled()) {
      const auto grad_u = grads[0] * plain_gelu_derivative(x + b, form);
      return {grad_u.to(x.scalar_type()), grad_u.reshape({-1, b.numel()}).sum(0).to(bias_type), at::Tensor()};
    }
    const at::Tensor g = grads[0].to(x.scalar_type()).contiguous();
    at::Tensor grad_x = at::empty_like(x, at::MemoryFormat::Contiguous);
    at::Tensor grad_bias = at::empty_like(b, at::MemoryFormat::Contiguous);
    const int64_t width = b.numel();
    if (x.scalar_type() == at::kBFloat16) {
      bias_gelu_backward_kernel(bf16_bits(g), bf16_bits(x), b.data_ptr<float>(), bf16_bits(grad_x), grad_bias.data_ptr<float>(),
                      x.numel() / width, width, form);
    } else {
      AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "bias_gelu_backward", [&] {
        bias_gelu_backward_kernel(g.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(),
                        grad_x.data_ptr<scalar_t>(), grad_bias.data_ptr<scalar_t>(), x.numel() / width, width, form);
      });
    }
    return {grad_x, grad_bias.to(bias_type), at::Tensor()};
  }
};

// float and double with a bias of their type; bf16 with a float or bf16 bias.
bool bias_gelu_has_kernel(const at::Tensor& x, const at::Tensor& bias) {
  const auto type = x.scalar_type(), bias_type = bias.scalar_type();
  const bool types = type == at::kBFloat16 ? (bias_type == at::kFloat || bias_type == at::kBFloat16)
                                           : (type == at::kFloat || type == at::kDouble) && bias_type == type;
  return x.device().is_cpu() && bias.device().is_cpu() && types && bias.dim() == 1 && x.dim() >= 1 &&
         x.size(-1) == bias.size(0) && x.numel() > 0;
}

}  // namespace

at::Tensor bias_gelu(const at::Tensor& x, const at::Tensor& bias, GeluForm form) {
  if (!bias_gelu_has_kernel(x, bias)) return plain_bias_gelu(x, bias, form);
  return BiasGeluFunction::apply(x, bias, static_cast<int64_t>(form));
}

}  // namespace mtbert::ops
