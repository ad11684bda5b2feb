#include "models/multi_head_attention.h"

#include <torch/torch.h>

namespace mtbert {

MultiHeadAttention::MultiHeadAttention(int64_t width, int64_t heads, double attention_dropout)
    : heads_(heads), head_dim_(width / heads) {
  query = register_module("query", torch::nn::Linear(width, width));
  key = register_module("key", torch::nn::Linear(width, width));
  value = register_module("value", torch::nn::Linear(width, width));
  dropout = register_module("dropout", Dropout(attention_dropout));
}

torch::Tensor MultiHeadAttention::split_heads(const torch::Tensor& x) const {
  return x.view({x.size(0), x.size(1), heads_, head_dim_}).transpose(1, 2);
}

AttentionOutput MultiHeadAttention::attend(const torch::Tensor& scores, const torch::Tensor& values,
                                           bool keep_probs) {
  auto probs = torch::softmax(scores, -1);
  return {merge_heads(torch::matmul(dropout(probs), values)), keep_probs ? probs : torch::Tensor()};
}

torch::Tensor MultiHeadAttention::merge_heads(const torch::Tensor& context) const {
  return context.transpose(1, 2).reshape({context.size(0), context.size(2), heads_ * head_dim_});
}

}  // namespace mtbert
