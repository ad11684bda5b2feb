#include "models/activation.h"

#include <torch/torch.h>

namespace mtbert {

torch::Tensor apply_activation(const torch::Tensor& x, const std::string& name) {
  if (name == "gelu") return torch::gelu(x);
  if (name == "relu") return torch::relu(x);
  return torch::gelu(x, "tanh");
}

}  // namespace mtbert
