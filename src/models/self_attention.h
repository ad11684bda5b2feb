#pragma once
// What an encoder layer's attention block asks of its "self" part: BERT's
// multi-head attention (bert_attention.h) or DeBERTa's disentangled one
// (disentangled_attention.h), whichever the config chooses.
#include <torch/types.h>

#include "models/encoder_context.h"
#include "models/model_config.h"
#include "models/multi_head_attention.h"

namespace mtbert {

class SelfAttention : public MultiHeadAttention {
 public:
  // hidden [B, N, H] gives keys and values; query_states [B, N, H] the queries
  // (undefined: hidden; EMD sets it). Returns the context [B, N, H], and the
  // attention probabilities when ctx.output_attentions asks for them.
  virtual AttentionOutput forward(const torch::Tensor& hidden, const EncoderContext& ctx,
                                  const torch::Tensor& query_states = {}) = 0;

 protected:
  explicit SelfAttention(const ModelConfig& c)
      : MultiHeadAttention(c.hidden_size, c.num_attention_heads, c.attention_probs_dropout_prob) {}
};

}  // namespace mtbert
