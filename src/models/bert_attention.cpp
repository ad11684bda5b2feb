#include "models/bert_attention.h"

#include <cmath>

#include <torch/torch.h>
#include "core/torch_compat.h"

#include "ops/add_layer_norm.h"

namespace mtbert {

BertSelfAttentionImpl::BertSelfAttentionImpl(const ModelConfig& c)
    : heads_(c.num_attention_heads), head_dim_(c.head_dim()) {
  query = register_module("query", torch::nn::Linear(c.hidden_size, c.hidden_size));
  key = register_module("key", torch::nn::Linear(c.hidden_size, c.hidden_size));
  value = register_module("value", torch::nn::Linear(c.hidden_size, c.hidden_size));
  dropout = register_module("dropout", Dropout(c.attention_probs_dropout_prob));
}

torch::Tensor BertSelfAttentionImpl::forward(const torch::Tensor& hidden, const EncoderContext& ctx,
                                             const torch::Tensor& query_states) {
  const int64_t batch = hidden.size(0), len = hidden.size(1);
  // [B, N, H] -> [B, heads, N, head_dim]
  auto split_heads = [&](const torch::Tensor& x) { return x.view({batch, len, heads_, head_dim_}).transpose(1, 2); };
  auto q = split_heads(query(query_states.defined() ? query_states : hidden));
  auto k = split_heads(key(hidden));
  auto v = split_heads(value(hidden));

  // LibTorch 2.x: one fused kernel (flash or memory-efficient attention on
  // CUDA) instead of scores, softmax, dropout and the second product, unless
  // the probabilities themselves are wanted. The additive padding bias is
  // passed in the query's dtype (bf16 under autocast, where the float32
  // lowest value becomes -inf: every row keeps [CLS], so no row is all -inf).
  if (compat::kHasFusedAttention && !ctx.attention_probs) {
    c10::optional<torch::Tensor> mask;
    if (ctx.attention_bias.defined()) mask = ctx.attention_bias.to(q.scalar_type());
    auto fused = compat::fused_attention(q, k, v, mask, is_training() ? dropout->p() : 0.0);
    return fused.transpose(1, 2).reshape({batch, len, heads_ * head_dim_});
  }
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
  dropout = register_module("dropout", Dropout(c.hidden_dropout_prob));
}

torch::Tensor BertResidualOutputImpl::forward(const torch::Tensor& x, const torch::Tensor& residual,
                                              const torch::Tensor& extra) {
  // The residual sum and LayerNorm in one pass (ops/add_layer_norm.h); with
  // dropout inactive (evaluation) the dense layer's bias joins that pass too.
  const auto& norm = LayerNorm->options;
  const bool dropping = is_training() && dropout->p() > 0;
  auto y = dropping ? dropout(dense(x)) : torch::matmul(x, dense->weight.t());
  if (extra.defined()) y = y + extra;
  return ops::add_layer_norm(y, dropping ? torch::Tensor() : dense->bias, residual, LayerNorm->weight,
                             LayerNorm->bias, norm.eps());
}

BertAttentionImpl::BertAttentionImpl(const ModelConfig& c) {
  self = c.disentangled() ? register_module("self", std::make_shared<DisentangledSelfAttentionImpl>(c))
                          : std::static_pointer_cast<SelfAttention>(
                                register_module("self", std::make_shared<BertSelfAttentionImpl>(c)));
  output = register_module("output", BertResidualOutput(c.hidden_size, c));
}

torch::Tensor BertAttentionImpl::forward(const torch::Tensor& hidden, const EncoderContext& ctx,
                                         const torch::Tensor& query_states) {
  auto context = self->forward(hidden, ctx, query_states);
  return output(context, query_states.defined() ? query_states : hidden);
}

}  // namespace mtbert
