#pragma once
// The stack of layers: HuggingFace's `BertEncoder` (`layer.0`, `layer.1`, ...).
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>

#include "models/bert_layer.h"

namespace mtbert {

class BertEncoderImpl : public torch::nn::Module {
 public:
  explicit BertEncoderImpl(const ModelConfig& config);
  torch::Tensor forward(torch::Tensor hidden, const EncoderContext& ctx);

  torch::nn::ModuleList layer{nullptr};
};
TORCH_MODULE(BertEncoder);

}  // namespace mtbert
