#pragma once
// DeBERTa's disentangled self-attention (HF DebertaV2's DisentangledSelfAttention,
// microsoft/DeBERTa's semantics):
//
//   A[i,j] = ( Qc_i . Kc_j  +  Qc_i . Kr_row(i,j)  +  Kc_j . Qr_row(i,j)  +  Qr_row(j,i) . Kr_row(i,j) )
//             content-to-content   c2p               p2c                  p2p (optional)
//            / sqrt(d * (1 + terms))
//
// with Qc, Kc the content projections, Kr, Qr the relative embeddings (shared
// by all layers, EncoderContext::relative_embeddings) projected by the content
// key/query projections (share_att_key) or by pos_key_proj / pos_query_proj,
// and row(i, j) from relative_position.h. The published code indexes both
// position terms by the row of i - j (the paper's text writes delta(j, i) for
// p2c; checkpoints follow the code, and so does this module). p2p, the
// paper's fourth term (eq. 2, P_i|j . P_j|i, dropped there and absent from HF),
// follows the paper's rows, since no published checkpoint uses it: the query
// of row(j, i) against the key of row(i, j). It depends on i - j only.
//
// Parameter names: BERT's query/key/value (HF DeBERTa's query_proj/key_proj/
// value_proj are renamed by the converter), so that a BERT checkpoint loads
// into this module with only the position projections new.
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include "models/dropout.h"
#include "models/encoder_context.h"
#include "models/model_config.h"
#include "models/self_attention.h"

namespace mtbert {

class DisentangledSelfAttentionImpl : public SelfAttention {
 public:
  explicit DisentangledSelfAttentionImpl(const ModelConfig& config);
  // hidden [B, N, H] gives keys and values; query_states [B, N, H] the queries
  // (undefined: hidden; EMD sets it). Returns the context [B, N, H].
  AttentionOutput forward(const torch::Tensor& hidden, const EncoderContext& ctx,
                          const torch::Tensor& query_states = {}) override;

  // Only without share_att_key, and only for the terms pos_att_type names
  // (c2p and p2p use pos_key_proj, p2c and p2p pos_query_proj).
  torch::nn::Linear pos_key_proj{nullptr}, pos_query_proj{nullptr};
  // On the relative embeddings, per layer (HF's pos_dropout, hidden_dropout_prob).
  Dropout pos_dropout{nullptr};

 private:
  // tokens [B, N, H] x relative rows [S, H] per head: [B, heads, N, S], or
  // the banded [B, heads, tiles, T, W] (ops/disentangled_scores.h).
  torch::Tensor full_product(const torch::Tensor& tokens, const torch::Tensor& rel) const;
  // by_query: c2p's windows (query rows), else p2c's (key rows).
  torch::Tensor banded_product(const torch::Tensor& tokens, const torch::Tensor& rel, const ops::RelativePlan& plan,
                               bool by_query) const;
  // The p2p term per head and distance, [heads, 2N - 1].
  torch::Tensor distance_product(const torch::Tensor& rel_queries, const torch::Tensor& rel_keys,
                                 const torch::Tensor& index) const;

  bool c2p_, p2c_, p2p_, relative_, share_att_key_;
  // 1 / sqrt(d * (1 + terms)). Queries are scaled before the products, as
  // microsoft/DeBERTa does, so half-precision GEMMs do not overflow.
  double inv_scale_;
};
TORCH_MODULE(DisentangledSelfAttention);

}  // namespace mtbert
