#include "optim/gradient_clipping.h"

#include <torch/torch.h>

#include <algorithm>

#include "core/torch_compat.h"

namespace mtbert {

namespace {

// Gradients of one device and dtype: the unit LibTorch's foreach operations
// take.
struct GradientGroup {
  torch::Device device;
  torch::ScalarType dtype;
  std::vector<torch::Tensor> grads;
};

}  // namespace

torch::Tensor clip_gradients(const std::vector<torch::Tensor>& parameters, double max_norm) {
  // mtbert's parameters are float32 on one device: one group, found by a
  // look at each gradient's metadata (no map, nothing read from the device),
  // whose norms and products are a few fused launches on a GPU where one
  // norm and one product per parameter were ~400 launches for bert-base.
  std::vector<GradientGroup> groups;
  for (const auto& p : parameters) {
    const auto& g = p.grad();
    if (!g.defined()) continue;
    auto group = std::find_if(groups.begin(), groups.end(), [&](const GradientGroup& k) {
      return k.device == g.device() && k.dtype == g.scalar_type();
    });
    if (group == groups.end()) group = groups.insert(groups.end(), GradientGroup{g.device(), g.scalar_type(), {}});
    group->grads.push_back(g.detach());
  }
  // The total norm lives on the first gradient's device (the parameters'
  // without any).
  if (groups.empty())
    return torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat).device(
                                parameters.empty() ? torch::Device(torch::kCPU) : parameters.front().device()));
  const torch::Device device = groups.front().device;
  std::vector<torch::Tensor> norms;
  for (const auto& group : groups) {
    // A half or bf16 group's norms are taken in float: rounded to bf16 they
    // would move the clipping coefficient by up to 0.4%.
    std::vector<torch::Tensor> widened;
    if (c10::elementSize(group.dtype) < 4)
      for (const auto& g : group.grads) widened.push_back(g.to(torch::kFloat));
    norms.push_back(
        torch::stack(at::_foreach_norm(widened.empty() ? group.grads : widened, 2)).to(device, torch::kFloat));
  }
  auto total = norms.size() == 1 ? norms.front().norm(2) : torch::cat(norms).norm(2);
  auto coefficient = torch::clamp_max(max_norm / (total + 1e-6), 1.0);
  for (auto& group : groups) compat::foreach_scale_(group.grads, coefficient.to(group.device));
  return total;
}

}  // namespace mtbert
