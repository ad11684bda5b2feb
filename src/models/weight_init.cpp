#include "models/weight_init.h"

#include <torch/torch.h>

namespace mtbert {

namespace {

void initialize_one(torch::nn::Module& m, double std) {
  if (auto* linear = m.as<torch::nn::Linear>()) {
    linear->weight.normal_(0.0, std);
    if (linear->bias.defined()) linear->bias.zero_();
  } else if (auto* embedding = m.as<torch::nn::Embedding>()) {
    embedding->weight.normal_(0.0, std);
    if (auto pad = embedding->options.padding_idx()) embedding->weight[*pad].zero_();
  } else if (auto* norm = m.as<torch::nn::LayerNorm>()) {
    norm->weight.fill_(1.0);
    norm->bias.zero_();
  }
}

}  // namespace

void initialize_bert_style(torch::nn::Module& module, double std) {
  torch::NoGradGuard no_grad;
  // modules(include_self=true) needs the module in a shared_ptr already, which
  // it is not yet inside its own constructor.
  initialize_one(module, std);
  for (auto& child : module.modules(/*include_self=*/false)) initialize_one(*child, std);
}

}  // namespace mtbert
