#include "models/activation.h"

#include <torch/torch.h>

#include "models/autocast_linear.h"
#include "ops/bias_gelu.h"

namespace mtbert {

torch::Tensor dense_activation(torch::nn::Linear& dense, const torch::Tensor& x, const std::string& name) {
  if (name == "relu") return torch::relu(dense(x));
  const char* approximate = name == "gelu" ? "none" : "tanh";
  if (!dense->bias.defined()) return torch::gelu(dense(x), approximate);
  if (!x.device().is_cpu()) return torch::gelu(autocast_linear(dense, x), approximate);
  const auto form = name == "gelu" ? ops::GeluForm::Erf : ops::GeluForm::Tanh;
  return ops::bias_gelu(autocast_linear(dense, x, /*with_bias=*/false), dense->bias, form);
}

}  // namespace mtbert
