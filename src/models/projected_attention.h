#pragma once
// Multi-head self-attention inside a PAL's projected space (width = rank):
// query, key and value projections, scaled dot-product attention with the
// padding bias and attention dropout, heads concatenated, and optionally the
// output projection W^o. The parallel PALs have none (the PAL's decoder V_D
// follows, as in the authors' code); the top block has one (its formula's
// MH(x) = Concat(head_1..head_h) W^o).
#include <torch/nn/modules/linear.h>

#include "models/multi_head_attention.h"


namespace mtbert {

class ProjectedSelfAttentionImpl : public MultiHeadAttention {
 public:
  ProjectedSelfAttentionImpl(int64_t width, int64_t heads, double attention_dropout, bool with_output = false);

  // x: [B, N, width]; attention_bias: additive, broadcastable to
  // [B, heads, N, N] (see encoder_context.h), or undefined.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& attention_bias);

  torch::nn::Linear output{nullptr};  // W^o, when asked for
};
TORCH_MODULE(ProjectedSelfAttention);

}  // namespace mtbert
