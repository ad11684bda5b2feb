#pragma once
// What an encoder layer's attention block asks of its "self" part: BERT's
// multi-head attention (bert_attention.h) or DeBERTa's disentangled one
// (disentangled_attention.h), whichever the config chooses.
#include <torch/nn/module.h>
#include <torch/types.h>

#include "models/encoder_context.h"

namespace mtbert {

class SelfAttention : public torch::nn::Module {
 public:
  // hidden [B, N, H] gives keys and values; query_states [B, N, H] the queries
  // (undefined: hidden; EMD sets it). Returns the context [B, N, H].
  virtual torch::Tensor forward(const torch::Tensor& hidden, const EncoderContext& ctx,
                                const torch::Tensor& query_states = {}) = 0;
};

}  // namespace mtbert
