#include "optim/optimizer.h"

#include <algorithm>
#include <cctype>
#include <unordered_set>

#include <torch/nn/modules/normalization.h>

namespace mtbert {

namespace {

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool is_encoder_parameter(const std::string& parameter_name) { return parameter_name.rfind("bert.", 0) == 0; }

bool exempt_from_weight_decay(const std::string& parameter_name) {
  const size_t dot = parameter_name.rfind('.');
  const std::string leaf = dot == std::string::npos ? parameter_name : parameter_name.substr(dot + 1);
  if (ends_with(leaf, "bias")) return true;
  if (dot == std::string::npos) return false;
  const size_t owner_start = parameter_name.rfind('.', dot - 1);
  const std::string owner = lowercase(
      parameter_name.substr(owner_start == std::string::npos ? 0 : owner_start + 1,
                            owner_start == std::string::npos ? dot : dot - owner_start - 1));
  return owner.find("layernorm") != std::string::npos || owner.find("layer_norm") != std::string::npos;
}

std::unique_ptr<FusedAdamW> make_optimizer(const torch::nn::Module& module, const TrainSection& train,
                                           const std::function<bool(const std::string&)>& is_shared) {
  // LayerNorm modules registered under any name.
  std::unordered_set<const void*> layer_norm_parameters;
  for (const auto& submodule : module.modules()) {
    if (!submodule->as<torch::nn::LayerNorm>()) continue;
    for (const auto& p : submodule->parameters()) layer_norm_parameters.insert(p.unsafeGetTensorImpl());
  }

  std::vector<std::vector<torch::Tensor>> groups(4);
  for (const auto& item : module.named_parameters()) {
    const torch::Tensor& p = item.value();
    if (!p.requires_grad()) continue;
    const bool no_decay =
        exempt_from_weight_decay(item.key()) || layer_norm_parameters.count(p.unsafeGetTensorImpl()) > 0;
    groups[(is_shared(item.key()) ? 0 : 2) + (no_decay ? 1 : 0)].push_back(p);
  }

  const double head_lr = train.head_lr > 0 ? train.head_lr : train.lr;
  auto options = [&](double lr, double weight_decay) {
    return std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(lr)
                                                            .betas({train.adam_beta1, train.adam_beta2})
                                                            .eps(train.adam_eps)
                                                            .weight_decay(weight_decay)
                                                            .amsgrad(false));
  };
  const double lr[] = {train.lr, train.lr, head_lr, head_lr};
  const double decay[] = {train.weight_decay, 0.0, train.weight_decay, 0.0};
  std::vector<torch::optim::OptimizerParamGroup> param_groups;
  for (int g = 0; g < 4; ++g) param_groups.emplace_back(groups[g], options(lr[g], decay[g]));
  auto optimizer = std::make_unique<FusedAdamW>(std::move(param_groups), torch::optim::AdamWOptions(train.lr)
                                                                             .betas({train.adam_beta1, train.adam_beta2})
                                                                             .eps(train.adam_eps)
                                                                             .weight_decay(train.weight_decay));
  // Newer LibTorch (sid's 2.14) merges each group's options with the
  // optimizer's defaults "by comparison": a field equal to AdamWOptions' stock
  // default (lr 1e-3, weight decay 1e-2) is taken as unset and replaced by the
  // default given above, so a head LR of 1e-3 would train at the encoder's.
  // The groups' values are set again once the optimizer holds them.
  for (int g = 0; g < 4; ++g) {
    auto& group = static_cast<torch::optim::AdamWOptions&>(optimizer->param_groups()[g].options());
    group.lr(lr[g]);
    group.weight_decay(decay[g]);
  }
  optimizer->create_state();
  return optimizer;
}

std::unique_ptr<FusedAdamW> make_optimizer(MultitaskModel& model, const TrainSection& train) {
  return make_optimizer(*model, train, is_encoder_parameter);
}

}  // namespace mtbert
