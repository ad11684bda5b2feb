#include "ops/add_layer_norm.h"

#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "core/vector_clones.h"
#include "ops/bf16_rows.h"
#include "ops/row_blocks.h"

namespace mtbert::ops {

namespace {

// ---- one row ---------------------------------------------------------------
// The loops are written for GCC to vectorize (AVX2 / AVX-512 clones for
// float): each is one pass over the row, which stays in L1.

// Sums of a row are taken in kLanes interleaved partial sums, added at the
// end: GCC keeps each lane in a vector register (it does not reorder a single
// float sum), and the order depends only on the row length.
constexpr int64_t kLanes = 16;

__attribute__((always_inline)) inline float add_lanes(const float* lanes) {
  float total = 0;
  for (int64_t k = 0; k < kLanes; ++k) total += lanes[k];
  return total;
}

// The sum of z[0, n) in those lanes.
__attribute__((always_inline)) inline float lane_sum(const float* __restrict z, int64_t n) {
  float lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t k = 0; k < kLanes; ++k) lanes[k] += z[j + k];
  for (; j < n; ++j) lanes[0] += z[j];
  return add_lanes(lanes);
}

// sum[j] = x[j] + bias[j] + residual[j] (bias may be null); returns the row's sum.
MTBERT_VECTOR_CLONES
float add_row_float(const float* __restrict x, const float* __restrict bias, const float* __restrict residual,
                    float* __restrict sum, int64_t n) {
  if (bias != nullptr) {
    for (int64_t j = 0; j < n; ++j) sum[j] = x[j] + bias[j] + residual[j];
  } else {
    for (int64_t j = 0; j < n; ++j) sum[j] = x[j] + residual[j];
  }
  return lane_sum(sum, n);
}

// The same with x in bf16 bits (a GEMM's output under autocast), widened as
// it is read.
MTBERT_VECTOR_CLONES
float add_row_bf16(const uint16_t* __restrict x, const float* __restrict bias, const float* __restrict residual,
                   float* __restrict sum, int64_t n) {
  if (bias != nullptr) {
    for (int64_t j = 0; j < n; ++j) sum[j] = bf16_to_float(x[j]) + bias[j] + residual[j];
  } else {
    for (int64_t j = 0; j < n; ++j) sum[j] = bf16_to_float(x[j]) + residual[j];
  }
  return lane_sum(sum, n);
}

MTBERT_VECTOR_CLONES
float squared_deviation_float(const float* __restrict z, float mean, int64_t n) {
  float lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t k = 0; k < kLanes; ++k) lanes[k] += (z[j + k] - mean) * (z[j + k] - mean);
  for (; j < n; ++j) lanes[0] += (z[j] - mean) * (z[j] - mean);
  return add_lanes(lanes);
}

MTBERT_VECTOR_CLONES
void normalize_row_float(const float* __restrict z, const float* __restrict gamma, const float* __restrict beta,
                         float* __restrict y, float mean, float rstd, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = (z[j] - mean) * rstd * gamma[j] + beta[j];
}

// Per feature: gamma_sum += g x_hat, beta_sum += g; returns (sum of g gamma,
// sum of g gamma x_hat) for the input gradient.
struct RowDots {
  float h, h_xhat;
};
MTBERT_VECTOR_CLONES
RowDots backward_sums_float(const float* __restrict grad, const float* __restrict z, const float* __restrict gamma,
                            float mean, float rstd, float* __restrict gamma_sum, float* __restrict beta_sum,
                            int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    gamma_sum[j] += grad[j] * ((z[j] - mean) * rstd);
    beta_sum[j] += grad[j];
  }
  float h[kLanes] = {}, h_xhat[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t k = 0; k < kLanes; ++k) {
      const float gg = grad[j + k] * gamma[j + k];
      h[k] += gg;
      h_xhat[k] += gg * ((z[j + k] - mean) * rstd);
    }
  }
  for (; j < n; ++j) {
    h[0] += grad[j] * gamma[j];
    h_xhat[0] += grad[j] * gamma[j] * ((z[j] - mean) * rstd);
  }
  return {add_lanes(h), add_lanes(h_xhat)};
}

// dz = rstd (g gamma - mean(g gamma) - x_hat mean(g gamma x_hat))
MTBERT_VECTOR_CLONES
void input_gradient_float(const float* __restrict grad, const float* __restrict z, const float* __restrict gamma,
                          float mean, float rstd, float h_mean, float h_xhat_mean, float* __restrict grad_z,
                          float* __restrict bias_sum, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float xhat = (z[j] - mean) * rstd;
    grad_z[j] = rstd * (grad[j] * gamma[j] - h_mean - xhat * h_xhat_mean);
  }
  if (bias_sum != nullptr) {
    for (int64_t j = 0; j < n; ++j) bias_sum[j] += grad_z[j];
  }
}

// double: the same arithmetic, plain loops (gradcheck).
double add_row(const double* x, const double* bias, const double* residual, double* sum, int64_t n) {
  double total = 0;
  for (int64_t j = 0; j < n; ++j) {
    sum[j] = x[j] + (bias != nullptr ? bias[j] : 0.0) + residual[j];
    total += sum[j];
  }
  return total;
}
double squared_deviation(const double* z, double mean, int64_t n) {
  double total = 0;
  for (int64_t j = 0; j < n; ++j) total += (z[j] - mean) * (z[j] - mean);
  return total;
}
void normalize_row(const double* z, const double* gamma, const double* beta, double* y, double mean, double rstd,
                   int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = (z[j] - mean) * rstd * gamma[j] + beta[j];
}
std::pair<double, double> backward_sums(const double* grad, const double* z, const double* gamma, double mean,
                                        double rstd, double* gamma_sum, double* beta_sum, int64_t n) {
  double h = 0, h_xhat = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double xhat = (z[j] - mean) * rstd;
    gamma_sum[j] += grad[j] * xhat;
    beta_sum[j] += grad[j];
    h += grad[j] * gamma[j];
    h_xhat += grad[j] * gamma[j] * xhat;
  }
  return {h, h_xhat};
}
void input_gradient(const double* grad, const double* z, const double* gamma, double mean, double rstd, double h_mean,
                    double h_xhat_mean, double* grad_z, double* bias_sum, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    grad_z[j] = rstd * (grad[j] * gamma[j] - h_mean - (z[j] - mean) * rstd * h_xhat_mean);
    if (bias_sum != nullptr) bias_sum[j] += grad_z[j];
  }
}

float add_row(const float* x, const float* bias, const float* residual, float* sum, int64_t n) {
  return add_row_float(x, bias, residual, sum, n);
}
float add_row(const uint16_t* x, const float* bias, const float* residual, float* sum, int64_t n) {
  return add_row_bf16(x, bias, residual, sum, n);
}
float squared_deviation(const float* z, float mean, int64_t n) { return squared_deviation_float(z, mean, n); }
void normalize_row(const float* z, const float* gamma, const float* beta, float* y, float mean, float rstd,
                   int64_t n) {
  normalize_row_float(z, gamma, beta, y, mean, rstd, n);
}
std::pair<float, float> backward_sums(const float* grad, const float* z, const float* gamma, float mean, float rstd,
                                      float* gamma_sum, float* beta_sum, int64_t n) {
  const RowDots dots = backward_sums_float(grad, z, gamma, mean, rstd, gamma_sum, beta_sum, n);
  return {dots.h, dots.h_xhat};
}
void input_gradient(const float* grad, const float* z, const float* gamma, float mean, float rstd, float h_mean,
                    float h_xhat_mean, float* grad_z, float* bias_sum, int64_t n) {
  input_gradient_float(grad, z, gamma, mean, rstd, h_mean, h_xhat_mean, grad_z, bias_sum, n);
}

// ---- all rows --------------------------------------------------------------

// Writes the sum z (kept for backward), y, and each row's mean and 1 / std.
// The variance is taken in a second pass over the row (no cancellation). X:
// x's element type, T's or bf16 bits (with T float).
template <typename T, typename X>
void add_layer_norm_forward_kernel(const X* x, const T* bias, const T* residual, const T* gamma, const T* beta, T* z, T* y, T* mean,
                    T* rstd, int64_t rows, int64_t width, double eps) {
  for_each_row(rows, width, [&](int64_t r) {
    const int64_t offset = r * width;
    const T m = add_row(x + offset, bias, residual + offset, z + offset, width) / static_cast<T>(width);
    const T variance = squared_deviation(z + offset, m, width) / static_cast<T>(width);
    const T s = static_cast<T>(1.0 / std::sqrt(static_cast<double>(variance) + eps));
    normalize_row(z + offset, gamma, beta, y + offset, m, s, width);
    mean[r] = m;
    rstd[r] = s;
  });
}

// The gradient of the sum, row by row, and the per-feature sums of gamma's,
// beta's (and the bias's) gradients.
template <typename T>
void add_layer_norm_backward_kernel(const T* grad, const T* z, const T* gamma, const T* mean, const T* rstd, T* grad_z,
                     T* grad_gamma, T* grad_beta, T* grad_bias, int64_t rows, int64_t width) {
  std::vector<T*> outs = {grad_gamma, grad_beta};
  if (grad_bias != nullptr) outs.push_back(grad_bias);
  for_each_row_summing<T>(rows, width, outs, [&](int64_t r, T* sums) {
    const int64_t offset = r * width;
    const auto [h, h_xhat] = backward_sums(grad + offset, z + offset, gamma, mean[r], rstd[r], sums, sums + width,
                                           width);
    input_gradient(grad + offset, z + offset, gamma, mean[r], rstd[r], h / static_cast<T>(width),
                   h_xhat / static_cast<T>(width), grad_z + offset, grad_bias != nullptr ? sums + 2 * width : nullptr,
                   width);
  });
}

at::Tensor plain_add_layer_norm(const at::Tensor& x, const at::Tensor& bias, const at::Tensor& residual,
                                const at::Tensor& weight, const at::Tensor& beta, double eps) {
  const auto sum = bias.defined() ? x + bias + residual : x + residual;
  return torch::layer_norm(sum, {weight.numel()}, weight, beta, eps);
}

template <typename T>
T* data_or_null(const at::Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

class AddLayerNormFunction : public torch::autograd::Function<AddLayerNormFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& bias,
                            const at::Tensor& residual, const at::Tensor& weight, const at::Tensor& beta, double eps) {
    const at::Tensor xc = x.contiguous(), rc = residual.contiguous(), gamma = weight.contiguous(),
                     shift = beta.contiguous();
    // No bias comes as an empty tensor: Function::apply takes no undefined ones.
    const at::Tensor b = bias.numel() > 0 ? bias.contiguous() : at::Tensor();
    const int64_t width = gamma.numel(), rows = xc.numel() / width;
    // Everything is in the residual's dtype but x, which may be bf16 (the
    // sum and LayerNorm then run in float, as autocast runs layer_norm).
    at::Tensor z = at::empty_like(rc, at::MemoryFormat::Contiguous);
    at::Tensor y = at::empty_like(rc, at::MemoryFormat::Contiguous);
    at::Tensor mean = at::empty({rows}, rc.options()), rstd = at::empty({rows}, rc.options());
    if (xc.scalar_type() == at::kBFloat16) {
      add_layer_norm_forward_kernel<float>(bf16_bits(xc), data_or_null<float>(b), rc.data_ptr<float>(), gamma.data_ptr<float>(),
                            shift.data_ptr<float>(), z.data_ptr<float>(), y.data_ptr<float>(), mean.data_ptr<float>(),
                            rstd.data_ptr<float>(), rows, width, eps);
    } else {
      AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "add_layer_norm", [&] {
        add_layer_norm_forward_kernel<scalar_t>(xc.data_ptr<scalar_t>(), data_or_null<scalar_t>(b), rc.data_ptr<scalar_t>(),
                                 gamma.data_ptr<scalar_t>(), shift.data_ptr<scalar_t>(), z.data_ptr<scalar_t>(),
                                 y.data_ptr<scalar_t>(), mean.data_ptr<scalar_t>(), rstd.data_ptr<scalar_t>(), rows,
                                 width, eps);
      });
    }
    ctx->save_for_backward({z, gamma, shift, mean, rstd});
    ctx->saved_data["eps"] = eps;
    ctx->saved_data["has_bias"] = b.defined();
    ctx->saved_data["x_type"] = static_cast<int64_t>(xc.scalar_type());
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &z = saved[0], &gamma = saved[1], &shift = saved[2], &mean = saved[3], &rstd = saved[4];
    const bool has_bias = ctx->saved_data["has_bias"].toBool();
    const auto x_type = static_cast<at::ScalarType>(ctx->saved_data["x_type"].toInt());
    const int64_t width = gamma.numel();
    if (torch::autograd::GradMode::is_enabled()) {
      // A graph of this gradient is being built (create_graph): LayerNorm's
      // own backward through LibTorch's operators, from the saved sum.
      auto sum = z.detach().requires_grad_(true);
      auto g = gamma.detach().requires_grad_(true), s = shift.detach().requires_grad_(true);
      auto y = torch::layer_norm(sum, {width}, g, s, ctx->saved_data["eps"].toDouble());
      auto d = torch::autograd::grad({y}, {sum, g, s}, {grads[0]}, /*retain_graph=*/true, /*create_graph=*/true);
      auto grad_bias = has_bias ? d[0].reshape({-1, width}).sum(0) : at::Tensor();
      return {d[0].to(x_type), grad_bias, d[0], d[1], d[2], at::Tensor()};
    }
    const at::Tensor g = grads[0].contiguous();
    at::Tensor grad_z = at::empty_like(z, at::MemoryFormat::Contiguous);
    at::Tensor grad_gamma = at::empty_like(gamma), grad_beta = at::empty_like(gamma);
    at::Tensor grad_bias = has_bias ? at::empty_like(gamma) : at::Tensor();
    AT_DISPATCH_FLOATING_TYPES(z.scalar_type(), "add_layer_norm_backward", [&] {
      add_layer_norm_backward_kernel<scalar_t>(g.data_ptr<scalar_t>(), z.data_ptr<scalar_t>(), gamma.data_ptr<scalar_t>(),
                                mean.data_ptr<scalar_t>(), rstd.data_ptr<scalar_t>(), grad_z.data_ptr<scalar_t>(),
                                grad_gamma.data_ptr<scalar_t>(), grad_beta.data_ptr<scalar_t>(),
                                data_or_null<scalar_t>(grad_bias), z.numel() / width, width);
    });
    return {grad_z.to(x_type), grad_bias, grad_z, grad_gamma, grad_beta, at::Tensor()};
  }
};

// Everything float or double on the CPU, x also bf16 beside float.
bool add_layer_norm_has_kernel(const at::Tensor& x, const at::Tensor& bias, const at::Tensor& residual, const at::Tensor& weight,
                const at::Tensor& beta) {
  const auto type = residual.scalar_type();
  const auto same = [&](const at::Tensor& t) { return t.device().is_cpu() && t.scalar_type() == type; };
  const bool x_type = x.scalar_type() == type || (x.scalar_type() == at::kBFloat16 && type == at::kFloat);
  const bool vectors = weight.dim() == 1 && beta.sizes() == weight.sizes() &&
                       (!bias.defined() || (bias.sizes() == weight.sizes() && same(bias)));
  return x.device().is_cpu() && x_type && (type == at::kFloat || type == at::kDouble) && same(residual) &&
         same(weight) && same(beta) && vectors && residual.sizes() == x.sizes() && x.dim() >= 1 &&
         x.size(-1) == weight.numel() && x.numel() > 0;
}

}  // namespace

at::Tensor add_layer_norm(const at::Tensor& x, const at::Tensor& bias, const at::Tensor& residual,
                          const at::Tensor& weight, const at::Tensor& beta, double eps) {
  if (!add_layer_norm_has_kernel(x, bias, residual, weight, beta)) return plain_add_layer_norm(x, bias, residual, weight, beta, eps);
  return AddLayerNormFunction::apply(x, bias.defined() ? bias : at::empty({0}, x.options()), residual, weight, beta,
                                     eps);
}

}  // namespace mtbert::ops
