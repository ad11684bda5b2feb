#include "ops/bias_gelu.h"

#include <torch/torch.h>

#include <cmath>
#include <cstdint>

#include "core/vector_clones.h"
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

template <typename scalar_t>
void forward_kernel(const scalar_t* x, const scalar_t* bias, scalar_t* y, int64_t rows, int64_t width, GeluForm form) {
  for_each_row(rows, width, [&](int64_t r) { forward_row(x + r * width, bias, y + r * width, width, form); });
}

template <typename scalar_t>
void backward_kernel(const scalar_t* grad, const scalar_t* x, const scalar_t* bias, scalar_t* grad_x,
                     scalar_t* grad_bias, int64_t rows, int64_t width, GeluForm form) {
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
    const at::Tensor x = input.contiguous(), b = bias.contiguous();
    at::Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
    const int64_t width = b.numel();
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "bias_gelu", [&] {
      forward_kernel<scalar_t>(x.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(),
                               x.numel() / width, width, form);
    });
    ctx->save_for_backward({x, b});
    ctx->saved_data["form"] = form_index;
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &b = saved[1];
    const auto form = static_cast<GeluForm>(ctx->saved_data["form"].toInt());
    if (torch::autograd::GradMode::is_enabled()) {
      const auto grad_x = grads[0] * plain_gelu_derivative(x + b, form);
      return {grad_x, grad_x.reshape({-1, b.numel()}).sum(0), at::Tensor()};
    }
    const at::Tensor g = grads[0].contiguous();
    at::Tensor grad_x = at::empty_like(x, at::MemoryFormat::Contiguous);
    at::Tensor grad_bias = at::empty_like(b, at::MemoryFormat::Contiguous);
    const int64_t width = b.numel();
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "bias_gelu_backward", [&] {
      backward_kernel<scalar_t>(g.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(),
                                grad_x.data_ptr<scalar_t>(), grad_bias.data_ptr<scalar_t>(), x.numel() / width, width,
                                form);
    });
    return {grad_x, grad_bias, at::Tensor()};
  }
};

bool has_kernel(const at::Tensor& x, const at::Tensor& bias) {
  const auto type = x.scalar_type();
  return x.device().is_cpu() && bias.device().is_cpu() && (type == at::kFloat || type == at::kDouble) &&
         bias.scalar_type() == type && bias.dim() == 1 && x.dim() >= 1 && x.size(-1) == bias.size(0) &&
         x.numel() > 0;
}

}  // namespace

at::Tensor bias_gelu(const at::Tensor& x, const at::Tensor& bias, GeluForm form) {
  if (!has_kernel(x, bias)) return plain_bias_gelu(x, bias, form);
  return BiasGeluFunction::apply(x, bias, static_cast<int64_t>(form));
}

}  // namespace mtbert::ops
