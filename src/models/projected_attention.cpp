#include "models/projected_attention.h"

#include <cmath>

#include <torch/torch.h>

namespace mtbert {

ProjectedSelfAttentionImpl::ProjectedSelfAttentionImpl(int64_t width, int64_t heads, double attention_dropout,
                                                       bool with_output)
    : heads_(heads), head_dim_(width / heads) {
  query = register_module("query", torch::nn::Linear(width, width));
  key = register_module("key", torch::nn::Linear(width, width));
  value = register_module("value", torch::nn::Linear(width, width));
  dropout = register_module("dropout", Dropout(attention_dropout));
  if (with_output) output = register_module("output", torch::nn::Linear(width, width));
}

torch::Tensor ProjectedSelfAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& attention_bias) {
  const int64_t batch = x.size(0), len = x.size(1);
  auto split_heads = [&](const torch::Tensor& t) { return t.view({batch, len, heads_, head_dim_}).transpose(1, 2); };
  auto q = split_heads(query(x)), k = split_heads(key(x)), v = split_heads(value(x));
  auto scores = torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(head_dim_));
  if (attention_bias.defined()) scores = scores + attention_bias;
  auto context = torch::matmul(dropout(torch::softmax(scores, -1)), v);
  auto heads = context.transpose(1, 2).reshape({batch, len, heads_ * head_dim_});
  return output ? output(heads) : heads;
}

}  // namespace mtbert
