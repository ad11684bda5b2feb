#pragma once
// One task's Projected Attention Layers beside every encoder layer
// (Stickland & Murray 2019, as in the authors' code):
//
//   PAL_l(h) = GELU(V_D(SA_l(V_E(h))))
//
// V_E (hidden -> rank, "encoder") and V_D (rank -> hidden, "decoder") are
// shared by all layers of the task; SA_l is a small multi-head self-attention
// of layer l in the projected space (projected_attention.h). The layer adds
// PAL_l of its input before its output LayerNorm:
//   LN(attention_output + FFN(attention_output) + PAL_l(h)).
//
// Parameters per task: (H r + r) + (r H + H) + L * 3 (r^2 + r).
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>

#include "models/model_config.h"
#include "models/pal_config.h"

namespace mtbert {

class ParallelPalsImpl : public torch::nn::Module {
 public:
  ParallelPalsImpl(const ModelConfig& encoder, const PalConfig& pals);

  // PAL_l(layer_input), [B, N, hidden]; attention_bias as the encoder's.
  torch::Tensor forward(int64_t layer_index, const torch::Tensor& layer_input, const torch::Tensor& attention_bias);

  torch::nn::Linear encoder{nullptr};  // V_E
  torch::nn::Linear decoder{nullptr};  // V_D
  torch::nn::ModuleList layer{nullptr};  // SA_l, one per encoder layer
};
TORCH_MODULE(ParallelPals);

}  // namespace mtbert
