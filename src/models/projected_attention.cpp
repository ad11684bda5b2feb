#include "models/projected_attention.h"

#include <cmath>

#include <torch/torch.h>

namespace mtbert {

ProjectedSelfAttentionImpl::ProjectedSelfAttentionImpl(int64_t width, int64_t heads, double attention_dropout,
                                                       bool with_output)
    : MultiHeadAttention(width, heads, attention_dropout) {
  if (with_output) output = register_module("output", torch::nn::Linear(width, width));
}

torch::Tensor ProjectedSelfAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& attention_bias) {
  auto q = split_heads(query(x)), k = split_heads(key(x)), v = split_heads(value(x));
  auto scores = torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(head_dim_));
  if (attention_bias.defined()) scores = scores + attention_bias;
  const torch::Tensor heads = attend(scores, v, /*keep_probs=*/false).hidden;
  return output ? output(heads) : heads;
}

}  // namespace mtbert
