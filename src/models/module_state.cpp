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

// Checks shapes and dtypes and sorts names; copies nothing. A floating
// parameter takes any floating tensor (a checkpoint converted with its
// weights kept in bf16 or fp16 is widened), anything else the exact dtype: an
// integer tensor where the model has weights is a damaged or foreign file.
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
    const bool floating = target.is_floating_point();
    if (floating ? !it->second.is_floating_point() : it->second.scalar_type() != target.scalar_type())
      throw UserError(fmt::format("{}: tensor {} is {} but the model's is {}{}", source, name,
                                  c10::toString(it->second.scalar_type()), c10::toString(target.scalar_type()),
                                  floating ? "; only floating dtypes load into weights" : ""));
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
