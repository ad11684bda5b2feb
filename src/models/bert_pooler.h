#pragma once
// tanh(dense(first token)): HuggingFace's `BertPooler`.
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include "models/model_config.h"

namespace mtbert {

class BertPoolerImpl : public torch::nn::Module {
 public:
  explicit BertPoolerImpl(const ModelConfig& config);
  // [B, N, H] -> [B, H]
  torch::Tensor forward(const torch::Tensor& hidden);

  torch::nn::Linear dense{nullptr};
};
TORCH_MODULE(BertPooler);

}  // namespace mtbert
