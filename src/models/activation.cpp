#include "models/activation.h"

#include <torch/torch.h>

#include "ops/bias_gelu.h"

namespace mtbert {

torch::Tensor dense_activation(torch::nn::Linear& dense, const torch::Tensor& x, const std::string& name) {
  if (name == "relu") return torch::relu(dense(x));
  if (!dense->bias.defined()) return torch::gelu(dense(x), name == "gelu" ? "none" : "tanh");
  const auto form = name == "gelu" ? ops::GeluForm::Erf : ops::GeluForm::Tanh;
  return ops::bias_gelu(torch::matmul(x, dense->weight.t()), dense->bias, form);
}

}  // namespace mtbert
