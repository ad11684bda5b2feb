#pragma once
// One post-LayerNorm transformer layer: HuggingFace's `BertLayer`
// (attention -> intermediate -> output).
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include "models/bert_attention.h"
#include "models/model_config.h"

namespace mtbert {

class BertIntermediateImpl : public torch::nn::Module {
 public:
  explicit BertIntermediateImpl(const ModelConfig& config);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::Linear dense{nullptr};

 private:
  std::string activation_;
};
TORCH_MODULE(BertIntermediate);

class BertLayerImpl : public torch::nn::Module {
 public:
  BertLayerImpl(const ModelConfig& config, int64_t index);
  // query_states (undefined: hidden) are the attention's queries and residual:
  // EMD passes run the last layer with hidden as keys/values. Returns the
  // layer's output and its attention probabilities (ctx.output_attentions).
  AttentionOutput forward(const torch::Tensor& hidden, const EncoderContext& ctx,
                          const torch::Tensor& query_states = {});

  BertAttention attention{nullptr};
  BertIntermediate intermediate{nullptr};
  BertResidualOutput output{nullptr};

 private:
  int64_t index_;  // position in the stack, for per-layer adapters
};
TORCH_MODULE(BertLayer);

}  // namespace mtbert
