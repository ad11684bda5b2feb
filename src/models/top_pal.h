#pragma once
// One task's low-rank transformer block on top of the shared encoder (the
// "top only" PAL variant of the CS224N PAL report, after Stickland & Murray's
// "low-rank layer on top"):
//
//   PAL(h) = V_D(SA(V_E(h))),   SA(x) = FFN(LN(x + MH(x)))
//
// V_E: hidden -> rank, MH: multi-head self-attention in the projected space
// with its output projection W^o (projected_attention.h), LN: LayerNorm over
// rank, FFN: rank -> 4 rank -> rank with GELU, V_D: rank -> hidden. The
// task's head pools PAL(h) instead of the encoder's last hidden state (as the
// formula says: no residual around the block).
//
// Parameters per task: (H r + r) + 4 (r^2 + r) + 2 r + (4 r^2 + 4 r) + (4 r^2 + r) + (r H + H).
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include "models/model_config.h"
#include "models/pal_config.h"
#include "models/projected_attention.h"

namespace mtbert {

class TopPalImpl : public torch::nn::Module {
 public:
  TopPalImpl(const ModelConfig& encoder, const PalConfig& pals);

  // hidden: the encoder's last hidden state [B, N, H]; attention_bias as the
  // encoder's. Returns PAL(hidden), [B, N, H].
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& attention_bias);

  torch::nn::Linear encoder{nullptr};  // V_E
  ProjectedSelfAttention attention{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};
  torch::nn::Linear intermediate{nullptr};
  torch::nn::Linear output{nullptr};
  torch::nn::Linear decoder{nullptr};  // V_D
};
TORCH_MODULE(TopPal);

}  // namespace mtbert
