#pragma once
// What every multi-head self-attention of mtbert shares (BERT's,
// bert_attention.h; DeBERTa's disentangled one, disentangled_attention.h; a
// PAL's, projected_attention.h): the query, key and value projections under
// HuggingFace's names, the split into heads, and the tail of scaled
// dot-product attention: softmax over the keys, attention dropout, the
// product with the values, heads merged. Each class computes its own scores.
#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>

#include "models/dropout.h"

namespace mtbert {

// An attention's result, and its probabilities when they were asked for
// (HuggingFace's output_attentions), for a layer to hand back to its caller.
struct AttentionOutput {
  torch::Tensor hidden;  // [B, N, width]
  torch::Tensor probs;   // [B, heads, N, N], or undefined
};

class MultiHeadAttention : public torch::nn::Module {
 public:
  torch::nn::Linear query{nullptr}, key{nullptr}, value{nullptr};
  Dropout dropout{nullptr};  // on the attention probabilities

 protected:
  // Registers query, key and value (width -> width) and dropout, in that order.
  MultiHeadAttention(int64_t width, int64_t heads, double attention_dropout);

  // [B, N, width] -> [B, heads, N, head_dim]
  torch::Tensor split_heads(const torch::Tensor& x) const;
  // scores [B, heads, N, N] (padding bias included), values [B, heads, N,
  // head_dim] -> the context [B, N, width]; with keep_probs, the softmax too.
  AttentionOutput attend(const torch::Tensor& scores, const torch::Tensor& values, bool keep_probs);
  // [B, heads, N, head_dim] -> [B, N, width]
  torch::Tensor merge_heads(const torch::Tensor& context) const;

  int64_t heads_;
  int64_t head_dim_;
};

}  // namespace mtbert
