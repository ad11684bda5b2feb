#include "models/autocast_linear.h"

#include <ATen/autocast_mode.h>
#include <torch/nn/functional/linear.h>
#include <torch/torch.h>

#include "core/autocast_scope.h"
#include "core/torch_compat.h"

namespace mtbert {

namespace {

// Whether autocast casts `t` for a matrix product: a float tensor on a device
// autocast is on for.
bool autocast_casts(const torch::Tensor& t) {
  return t.defined() && t.scalar_type() == torch::kFloat && compat::autocast_enabled(t.device().type());
}

}  // namespace

torch::Tensor autocast_weight(const torch::Tensor& w) {
  if (!autocast_casts(w)) return w;
  const auto type = w.device().type();
  const auto dtype = compat::autocast_dtype(type);
  if (torch::Tensor kept = kept_weight_cast(w, dtype); kept.defined()) return kept;
  return at::autocast::cached_cast(dtype, w, type);
}

torch::ScalarType autocast_dtype_of(const torch::Tensor& x) {
  return autocast_casts(x) ? compat::autocast_dtype(x.device().type()) : x.scalar_type();
}

torch::Tensor autocast_input(const torch::Tensor& x) { return autocast_casts(x) ? x.to(autocast_dtype_of(x)) : x; }

torch::Tensor autocast_linear(const torch::nn::Linear& layer, const torch::Tensor& x, bool with_bias, double scale) {
  const auto weight = autocast_weight(layer->weight);
  const auto bias = with_bias ? autocast_weight(layer->bias) : torch::Tensor();
  if (bias.defined() && x.dim() >= 2 && x.is_contiguous()) {
    auto sizes = x.sizes().vec();
    sizes.back() = weight.size(0);
    return torch::addmm(bias, x.view({-1, x.size(-1)}), weight.t(), /*beta=*/scale, /*alpha=*/scale).view(sizes);
  }
  auto y = torch::nn::functional::linear(x, weight, bias);
  return scale == 1.0 ? y : y * scale;
}

}  // namespace mtbert
