#include "models/bert_attention.h"

#include <cmath>

#include <torch/torch.h>

namespace mtbert {

BertSelfAttentionImpl::BertSelfAttentionImpl(const ModelConfig& c)
    : heads_(c.num_attention_heads), head_dim_(c.head_dim()) {
  query = register_module("query", torch::nn::Linear(c.hidden_size, c.hidden_size));
  key = register_module("key", torch::nn::Linear(c.hidden_size, c.hidden_size));
  value = register_module("value", torch::nn::Linear(c.hidden_size, c.hidden_size));
  dropout = register_module("dropout", torch::nn::Dropout(c.attention_probs_dropout_prob));
}

torch::Tensor BertSelfAttentionImpl::forward(const torch::Tensor& hidden, const EncoderContext& ctx,
                                             const torch::Tensor& query_states) {
  const int64_t batch = hidden.size(0), len = hidden.size(1);
  // [B, N, H] -> [B, heads, N, head_dim]
  auto split_heads = [&](const torch::Tensor& x) { return x.view({batch, len, heads_, head_dim_}).transpose(1, 2); };
  auto q = split_heads(query(query_states.defined() ? query_states : hidden));
  auto k = split_heads(key(hidden));
  auto v = split_heads(value(hidden));

  // Scaled after the product, as HuggingFace does, so rounding matches.
  auto scores = torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(head_dim_));
  if (ctx.attention_bias.defined()) scores = scores + ctx.attention_bias;
  auto probs = torch::softmax(scores, -1);
  if (ctx.attention_probs) ctx.attention_probs->push_back(probs);
  auto context = torch::matmul(dropout(probs), v);
  return context.transpose(1, 2).reshape({batch, len, heads_ * head_dim_});
}

BertResidualOutputImpl::BertResidualOutputImpl(int64_t in_features, const ModelConfig& c) {
  dense = register_module("dense", torch::nn::Linear(in_features, c.hidden_size));
  LayerNorm = register_module(
      "LayerNorm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps)));
  dropout = register_module("dropout", torch::nn::Dropout(c.hidden_dropout_prob));
}

torch::Tensor BertResidualOutputImpl::forward(const torch::Tensor& x, const torch::Tensor& residual,
                                              const torch::Tensor& extra) {
  auto y = dropout(dense(x)) + residual;
  if (extra.defined()) y = y + extra;
  return LayerNorm(y);
}

BertAttentionImpl::BertAttentionImpl(const ModelConfig& c) {
  if (c.disentangled()) {
    disentangled_self = register_module("self", DisentangledSelfAttention(c));
  } else {
    self = register_module("self", BertSelfAttention(c));
  }
  output = register_module("output", BertResidualOutput(c.hidden_size, c));
}

torch::Tensor BertAttentionImpl::forward(const torch::Tensor& hidden, const EncoderContext& ctx,
                                         const torch::Tensor& query_states) {
  auto context = self ? self(hidden, ctx, query_states) : disentangled_self(hidden, ctx, query_states);
  return output(context, query_states.defined() ? query_states : hidden);
}

}  // namespace mtbert
