#include "optim/gradient_clipping.h"

#include <torch/torch.h>

namespace mtbert {

torch::Tensor clip_gradients(const std::vector<torch::Tensor>& parameters, double max_norm) {
  std::vector<torch::Tensor> norms;
  for (const auto& p : parameters)
    if (p.grad().defined()) norms.push_back(p.grad().detach().norm(2).to(torch::kFloat));
  if (norms.empty()) return torch::zeros({});
  auto total = torch::stack(norms).norm(2);
  auto coefficient = torch::clamp_max(max_norm / (total + 1e-6), 1.0);
  for (const auto& p : parameters)
    if (p.grad().defined()) p.grad().detach().mul_(coefficient.to(p.grad().dtype()));
  return total;
}

}  // namespace mtbert
