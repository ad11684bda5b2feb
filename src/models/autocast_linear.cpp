#include "models/autocast_linear.h"

#include <ATen/autocast_mode.h>
#include <torch/nn/functional/linear.h>

#include "core/torch_compat.h"

namespace mtbert {

namespace {

torch::Tensor autocast_weight(const torch::Tensor& w) {
  const auto type = w.device().type();
  if (!w.defined() || w.scalar_type() != torch::kFloat || !compat::autocast_enabled(type)) return w;
  return at::autocast::cached_cast(compat::autocast_dtype(type), w, type);
}

}  // namespace

torch::Tensor autocast_input(const torch::Tensor& x) {
  const auto type = x.device().type();
  if (!x.defined() || x.scalar_type() != torch::kFloat || !compat::autocast_enabled(type)) return x;
  return x.to(compat::autocast_dtype(type));
}

torch::Tensor autocast_linear(const torch::nn::Linear& layer, const torch::Tensor& x, bool with_bias) {
  return torch::nn::functional::linear(x, autocast_weight(layer->weight),
                                       with_bias ? autocast_weight(layer->bias) : torch::Tensor());
}

}  // namespace mtbert
