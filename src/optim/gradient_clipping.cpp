#include "optim/gradient_clipping.h"

#include <map>
#include <tuple>

#include <torch/torch.h>

#include "core/torch_compat.h"

namespace mtbert {

torch::Tensor clip_gradients(const std::vector<torch::Tensor>& parameters, double max_norm) {
  // Gradients grouped by device and dtype, the unit LibTorch's foreach
  // operations take. mtbert's parameters are float32 on one device: one
  // group, whose norms and products are a few fused launches on a GPU where
  // one norm and one product per parameter were ~400 launches for bert-base.
  std::map<std::tuple<c10::DeviceType, c10::DeviceIndex, c10::ScalarType>, std::vector<torch::Tensor>> groups;
  c10::optional<torch::Device> device;  // the first gradient's: where the total norm lives
  for (const auto& p : parameters) {
    if (!p.grad().defined()) continue;
    if (!device) device = p.grad().device();
    const auto& g = p.grad();
    groups[{g.device().type(), g.device().index(), g.scalar_type()}].push_back(g.detach());
  }
  if (groups.empty()) return torch::zeros({});
  std::vector<torch::Tensor> norms;
  for (const auto& [key, grads] : groups) {
    // A half or bf16 group's norms are taken in float: rounded to bf16 they
    // would move the clipping coefficient by up to 0.4%.
    std::vector<torch::Tensor> widened;
    if (c10::elementSize(std::get<2>(key)) < 4)
      for (const auto& g : grads) widened.push_back(g.to(torch::kFloat));
    norms.push_back(torch::stack(at::_foreach_norm(widened.empty() ? grads : widened, 2)).to(*device, torch::kFloat));
  }
  auto total = torch::cat(norms).norm(2);
  auto coefficient = torch::clamp_max(max_norm / (total + 1e-6), 1.0);
  for (auto& [key, grads] : groups) compat::foreach_scale_(grads, coefficient.to(grads.front().device()));
  return total;
}

}  // namespace mtbert
