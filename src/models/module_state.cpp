#include "models/module_state.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include "core/user_error.h"

namespace mtbert {

NamedTensors module_state(const torch::nn::Module& module) {
  NamedTensors state;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) state.emplace(p.key(), p.value());
  for (const auto& b : module.named_buffers(/*recurse=*/true)) state.emplace(b.key(), b.value());
  return state;
}

void load_module_state(torch::nn::Module& module, const NamedTensors& tensors, const std::string& source) {
  const NamedTensors expected = module_state(module);
  std::vector<std::string> missing, unexpected;
  for (const auto& [name, target] : expected) {
    auto it = tensors.find(name);
    if (it == tensors.end()) {
      missing.push_back(name);
      continue;
    }
    if (it->second.sizes() != target.sizes()) {
      throw UserError(fmt::format("{}: tensor {} has shape {} but the model's config implies {}", source, name,
                                  it->second.sizes(), target.sizes()));
    }
  }
  for (const auto& [name, tensor] : tensors)
    if (!expected.count(name)) unexpected.push_back(name);

  auto listing = [](const std::vector<std::string>& names) {
    const size_t shown = std::min<size_t>(names.size(), 3);
    std::string s = fmt::format("{}", fmt::join(names.begin(), names.begin() + shown, ", "));
    if (names.size() > shown) s += fmt::format(" and {} more", names.size() - shown);
    return s;
  };
  if (!missing.empty())
    throw UserError(fmt::format("{}: missing {} tensor(s) the model's config implies: {}", source, missing.size(),
                                listing(missing)));
  if (!unexpected.empty())
    throw UserError(fmt::format("{}: {} tensor(s) the model's config does not have: {}", source, unexpected.size(),
                                listing(unexpected)));

  torch::NoGradGuard no_grad;
  for (const auto& [name, target] : expected) target.copy_(tensors.at(name));
}

}  // namespace mtbert
