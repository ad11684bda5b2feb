#pragma once
// Multi-head self-attention with its output projection, residual and
// LayerNorm: HuggingFace's `BertAttention` (`self` + `output`); `self` is
// DeBERTa's disentangled attention when the config asks for it.
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include "models/disentangled_attention.h"
#include "models/dropout.h"
#include "models/encoder_context.h"
#include "models/model_config.h"
#include "models/self_attention.h"

namespace mtbert {

class BertSelfAttentionImpl : public SelfAttention {
 public:
  explicit BertSelfAttentionImpl(const ModelConfig& config) : SelfAttention(config) {}
  AttentionOutput forward(const torch::Tensor& hidden, const EncoderContext& ctx,
                          const torch::Tensor& query_states = {}) override;
};
TORCH_MODULE(BertSelfAttention);

// dense -> dropout -> LayerNorm(x + residual): the "output" half of attention
// and of the feed-forward block (HF's BertSelfOutput / BertOutput).
class BertResidualOutputImpl : public torch::nn::Module {
 public:
  BertResidualOutputImpl(int64_t in_features, const ModelConfig& config);
  // `extra` (may be undefined) is added before the LayerNorm: the PAL branch.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& residual, const torch::Tensor& extra = {});

  torch::nn::Linear dense{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
  Dropout dropout{nullptr};
};
TORCH_MODULE(BertResidualOutput);

class BertAttentionImpl : public torch::nn::Module {
 public:
  explicit BertAttentionImpl(const ModelConfig& config);
  // query_states (undefined: hidden) give the queries and the residual.
  // Returns the block's output and the probabilities `self` handed back.
  AttentionOutput forward(const torch::Tensor& hidden, const EncoderContext& ctx,
                          const torch::Tensor& query_states = {});

  // Registered as "self" and "output", HuggingFace's names. `self` is
  // BertSelfAttention, or DisentangledSelfAttention when the config asks for
  // it (ModelConfig::disentangled()).
  std::shared_ptr<SelfAttention> self;
  BertResidualOutput output{nullptr};
};
TORCH_MODULE(BertAttention);

}  // namespace mtbert
