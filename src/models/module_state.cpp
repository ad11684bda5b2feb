#include "models/module_state.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include "core/user_error.h"

namespace mtbert {

namespace {

std::string listing(const std::vector<std::string>& names) {
  const size_t shown = std::min<size_t>(names.size(), 3);
  std::string s = fmt::format("{}", fmt::join(names.begin(), names.begin() + shown, ", "));
  if (names.size() > shown) s += fmt::format(" and {} more", names.size() - shown);
  return s;
}

// Checks shapes and sorts names; copies nothing.
StateMatch match_state(const NamedTensors& expected, const NamedTensors& tensors, const std::string& source) {
  StateMatch match;
  for (const auto& [name, target] : expected) {
    auto it = tensors.find(name);
    if (it == tensors.end()) {
      match.missing.push_back(name);
      continue;
    }
    if (it->second.sizes() != target.sizes()) {
      throw UserError(fmt::format("{}: tensor {} has shape {} but the model's config implies {}", source, name,
                                  it->second.sizes(), target.sizes()));
    }
  }
  for (const auto& [name, tensor] : tensors)
    if (!expected.count(name)) match.unexpected.push_back(name);
  return match;
}

void copy_present(const NamedTensors& expected, const NamedTensors& tensors) {
  torch::NoGradGuard no_grad;
  for (const auto& [name, target] : expected)
    if (auto it = tensors.find(name); it != tensors.end()) target.copy_(it->second);
}

}  // namespace

NamedTensors module_state(const torch::nn::Module& module) {
  NamedTensors state;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) state.emplace(p.key(), p.value());
  for (const auto& b : module.named_buffers(/*recurse=*/true)) state.emplace(b.key(), b.value());
  return state;
}

void load_module_state(torch::nn::Module& module, const NamedTensors& tensors, const std::string& source) {
  const NamedTensors expected = module_state(module);
  const StateMatch match = match_state(expected, tensors, source);
  if (!match.missing.empty())
    throw UserError(fmt::format("{}: missing {} tensor(s) the model's config implies: {}", source,
                                match.missing.size(), listing(match.missing)));
  if (!match.unexpected.empty())
    throw UserError(fmt::format("{}: {} tensor(s) the model's config does not have: {}", source,
                                match.unexpected.size(), listing(match.unexpected)));
  copy_present(expected, tensors);
}

StateMatch load_matching_module_state(torch::nn::Module& module, const NamedTensors& tensors,
                                      const std::string& source) {
  const NamedTensors expected = module_state(module);
  StateMatch match = match_state(expected, tensors, source);
  copy_present(expected, tensors);
  return match;
}

}  // namespace mtbert
