#include "models/bert_encoder.h"

#include <torch/torch.h>

namespace mtbert {

BertEncoderImpl::BertEncoderImpl(const ModelConfig& c) {
  layer = register_module("layer", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layer->push_back(BertLayer(c, i));
}

torch::Tensor BertEncoderImpl::forward(torch::Tensor hidden, const EncoderContext& ctx) {
  for (const auto& module : *layer) hidden = module->as<BertLayer>()->forward(hidden, ctx);
  return hidden;
}

}  // namespace mtbert
