#include "models/bert_attention.h"

#include <cmath>

#include <torch/torch.h>
#include "core/torch_compat.h"
#include "models/autocast_linear.h"

#include "ops/add_layer_norm.h"

namespace mtbert {

AttentionOutput BertSelfAttentionImpl::forward(const torch::Tensor& hidden, const EncoderContext& ctx,
                                               const torch::Tensor& query_states) {
  const auto input = autocast_input(hidden);
  // LibTorch 2.x: one fused kernel (flash or memory-efficient attention on
  // CUDA) instead of scores, softmax, dropout and the second product, unless
  // the probabilities themselves are wanted. The additive padding bias is
  // passed in the query's dtype (bf16 under autocast, where the float32
  // lowest value becomes -inf: every row keeps [CLS], so no row is all -inf).
  // On a CPU only in float32 without dropout. LibTorch's CPU kernel has no
  // dropout and falls back to its unfused math path (a Bernoulli mask,
  // per-batch products in backward), and in bf16 it was 3-6x slower than the
  // path below; measured on LibTorch 2.14 (AMD EPYC, avx512_bf16, no AMX),
  // small preset, N = 64 and 128: the training step 1.1-1.2x faster (fp32)
  // and 1.25-1.9x (bf16) by the path below, inference 3-6x in bf16, while in
  // float32 inference the fused kernel is 15-19% faster.
  const bool cpu_unfused =
      input.device().is_cpu() && (input.scalar_type() != torch::kFloat || (is_training() && dropout->p() > 0));
  const bool fused = compat::kHasFusedAttention && !ctx.output_attentions && !cpu_unfused;
  // The path below scales the queries in their projection's GEMM (x W^T + b,
  // times 1/sqrt(head_dim) by addmm's alpha and beta) instead of the scores
  // in a pass of their own: HuggingFace's scores to rounding, and bit for bit
  // where sqrt(head_dim) is a power of 2 (head_dim 64, 16, 4).
  const double query_scale = fused ? 1.0 : 1.0 / std::sqrt(static_cast<double>(head_dim_));
  auto q = split_heads(autocast_linear(query, query_states.defined() ? query_states : input, true, query_scale));
  auto k = split_heads(autocast_linear(key, input));
  auto v = split_heads(autocast_linear(value, input));
  if (fused) {
    c10::optional<torch::Tensor> mask;
    if (ctx.attention_bias.defined()) mask = ctx.attention_bias.to(q.scalar_type());
    return {merge_heads(compat::fused_attention(q, k, v, mask, is_training() ? dropout->p() : 0.0)), {}};
  }
  auto scores = torch::matmul(q, k.transpose(-1, -2));
  if (ctx.attention_bias.defined()) scores = scores + ctx.attention_bias;
  return attend(scores, v, ctx.output_attentions);
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
  // dropout inactive (evaluation) the dense layer's bias joins that pass too,
  // on a CPU: elsewhere that unit has no kernel, and the bias stays in the
  // GEMM (cuBLASLt adds it in its epilogue) rather than take a pass of its own.
  const auto& norm = LayerNorm->options;
  const bool dropping = is_training() && dropout->p() > 0;
  const bool bias_in_gemm = dropping || !x.device().is_cpu();
  auto y = autocast_linear(dense, x, bias_in_gemm);
  if (dropping) y = dropout(y);
  if (extra.defined()) y = y + extra;
  return ops::add_layer_norm(y, bias_in_gemm ? torch::Tensor() : dense->bias, residual, LayerNorm->weight,
                             LayerNorm->bias, norm.eps());
}

BertAttentionImpl::BertAttentionImpl(const ModelConfig& c) {
  self = c.disentangled() ? register_module("self", std::make_shared<DisentangledSelfAttentionImpl>(c))
                          : std::static_pointer_cast<SelfAttention>(
                                register_module("self", std::make_shared<BertSelfAttentionImpl>(c)));
  output = register_module("output", BertResidualOutput(c.hidden_size, c));
}

AttentionOutput BertAttentionImpl::forward(const torch::Tensor& hidden, const EncoderContext& ctx,
                                           const torch::Tensor& query_states) {
  AttentionOutput attended = self->forward(hidden, ctx, query_states);
  attended.hidden = output(attended.hidden, query_states.defined() ? query_states : hidden);
  return attended;
}

}  // namespace mtbert
