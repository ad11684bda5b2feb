#include "models/disentangled_attention.h"

#include <cmath>

#include <torch/torch.h>

#include "core/internal_error.h"
#include "models/autocast_linear.h"
#include "ops/disentangled_scores.h"

namespace mtbert {

DisentangledSelfAttentionImpl::DisentangledSelfAttentionImpl(const ModelConfig& c)
    : SelfAttention(c),
      c2p_(c.has_c2p()),
      p2c_(c.has_p2c()),
      p2p_(c.has_p2p()),
      relative_(c.relative_attention),
      share_att_key_(c.share_att_key) {
  // HF counts the terms pos_att_type names, with or without relative_attention.
  inv_scale_ = 1.0 / std::sqrt(static_cast<double>(head_dim_ * (1 + int(c2p_) + int(p2c_) + int(p2p_))));
  if (relative_ && !share_att_key_) {
    // p2p needs both: the relative queries and the relative keys.
    if (c2p_ || p2p_)
      pos_key_proj = register_module("pos_key_proj", torch::nn::Linear(c.hidden_size, c.hidden_size));
    if (p2c_ || p2p_)
      pos_query_proj = register_module("pos_query_proj", torch::nn::Linear(c.hidden_size, c.hidden_size));
  }
  pos_dropout = register_module("pos_dropout", Dropout(c.hidden_dropout_prob));
}

// The position GEMMs batch over heads with all tokens of the batch as rows,
// [heads, B*N, d] x [heads, d, S], so the relative keys/queries are not copied
// once per sequence; the result is viewed as [B, heads, N, S] (the op takes
// strided operands).
torch::Tensor DisentangledSelfAttentionImpl::full_product(const torch::Tensor& tokens,
                                                          const torch::Tensor& rel) const {
  const int64_t batch = tokens.size(0), len = tokens.size(1), span = rel.size(0);
  auto by_head = tokens.view({batch * len, heads_, head_dim_}).transpose(0, 1);
  auto rel_by_head = rel.view({span, heads_, head_dim_}).permute({1, 2, 0});
  return torch::bmm(by_head, rel_by_head).view({heads_, batch, len, span}).permute({1, 0, 2, 3});
}

// The banded form: each tile of rows against the window of relative rows it
// uses, [heads * tiles, B*T, d] x [heads * tiles, d, W] (one copy of the
// tokens into tile order, rows past N zero), viewed as the op's
// [B, heads, tiles, T, W]. At N = 128 a window is 159 of 255 rows.
torch::Tensor DisentangledSelfAttentionImpl::banded_product(const torch::Tensor& tokens, const torch::Tensor& rel,
                                                            const ops::RelativePlan& plan, bool by_query) const {
  const int64_t batch = tokens.size(0), len = tokens.size(1), tile = plan.tile_rows(), width = plan.width();
  const int64_t tiles = plan.tiles();
  auto x = tokens.view({batch, len, heads_, head_dim_});
  if (tiles * tile > len) x = torch::constant_pad_nd(x, {0, 0, 0, 0, 0, tiles * tile - len});
  x = x.view({batch, tiles, tile, heads_, head_dim_}).permute({3, 1, 0, 2, 4}).reshape({-1, batch * tile, head_dim_});
  auto windows = rel.index_select(0, by_query ? plan.c2p_rows() : plan.p2c_rows())
                     .view({tiles, width, heads_, head_dim_})
                     .permute({2, 0, 3, 1})
                     .reshape({-1, head_dim_, width});
  return torch::bmm(x, windows).view({heads_, tiles, batch, tile, width}).permute({2, 0, 1, 3, 4});
}

// p2p for the 2N - 1 distances, [heads, 2N - 1]: entry i - j + N - 1 is
// Qr_row(j,i) . Kr_row(i,j), the paper's P_i|j P_j|i^T (eq. 2) with the rows of
// eq. 4 (Kr at delta(i, j), Qr at delta(j, i)). `index` maps distance i - j
// to row(i, j), so its reverse maps it to row(j, i).
torch::Tensor DisentangledSelfAttentionImpl::distance_product(const torch::Tensor& rel_queries,
                                                              const torch::Tensor& rel_keys,
                                                              const torch::Tensor& index) const {
  const int64_t distances = index.size(0);
  auto keys = rel_keys.index_select(0, index).view({distances, heads_, head_dim_});
  auto queries = rel_queries.index_select(0, index.flip(0)).view({distances, heads_, head_dim_});
  return (queries * keys).sum(-1).t();
}

AttentionOutput DisentangledSelfAttentionImpl::forward(const torch::Tensor& hidden, const EncoderContext& ctx,
                                                       const torch::Tensor& query_states) {
  const auto input = autocast_input(hidden);
  // The scale in the GEMM (addmm's alpha and beta), not in a pass of its own.
  auto q_tokens = autocast_linear(query, query_states.defined() ? query_states : input, true, inv_scale_);
  auto k_tokens = autocast_linear(key, input);
  auto q = split_heads(q_tokens);
  auto k = split_heads(k_tokens);
  auto v = split_heads(autocast_linear(value, input));
  auto content = torch::matmul(q, k.transpose(-1, -2));

  torch::Tensor scores;
  if (relative_ && (c2p_ || p2c_ || p2p_)) {
    check_invariant(ctx.relative_embeddings.defined() && ctx.relative_plan,
                    "disentangled attention needs the relative positions in its EncoderContext "
                    "(BertEncoder::add_relative_positions)");
    const ops::RelativePlan& plan = *ctx.relative_plan;
    auto rel = pos_dropout(ctx.relative_embeddings);  // [S, H]
    torch::Tensor rel_keys, rel_queries;  // [S, H]
    if (c2p_ || p2p_) rel_keys = autocast_linear(share_att_key_ ? key : pos_key_proj, rel);
    if (p2c_ || p2p_) rel_queries = autocast_linear(share_att_key_ ? query : pos_query_proj, rel, true, inv_scale_);
    c10::optional<torch::Tensor> c2p, p2c, p2p;
    if (c2p_)
      c2p = plan.banded() ? banded_product(q_tokens, rel_keys, plan, /*by_query=*/true)
                          : full_product(q_tokens, rel_keys);
    if (p2c_)
      p2c = plan.banded() ? banded_product(k_tokens, rel_queries, plan, /*by_query=*/false)
                          : full_product(k_tokens, rel_queries);
    if (p2p_) p2p = distance_product(rel_queries, rel_keys, plan.index());
    scores = ops::disentangled_scores(content, c2p, p2c, ctx.relative_plan, 1.0,
                                      ctx.attention_bias.defined() ? c10::optional<torch::Tensor>(ctx.attention_bias)
                                                                   : c10::nullopt,
                                      p2p);
  } else {
    scores = ctx.attention_bias.defined() ? content + ctx.attention_bias : content;
  }
  return attend(scores, v, ctx.output_attentions);
}

}  // namespace mtbert
