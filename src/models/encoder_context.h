#pragma once
// What every encoder layer needs besides its input, built once per forward
// pass by the model and handed down unchanged.
#include <functional>
#include <vector>

#include <torch/types.h>

#include "ops/relative_plan.h"

namespace mtbert {

struct EncoderContext {
  // Additive attention bias broadcastable to [B, heads, N, N]: 0 where a key
  // may be attended to, the dtype's lowest value where it is padding.
  torch::Tensor attention_bias;

  // Disentangled attention (empty otherwise), set by the encoder once per
  // forward pass: the rows of the relative embedding table this sequence
  // length uses ([span, H], LayerNorm-ed when the config says so), and the
  // op's plan for this length: the row of each distance within them, and the
  // band of the position GEMMs where it pays (see relative_position.h).
  torch::Tensor relative_embeddings;
  ops::RelativePlanPtr relative_plan;

  // Each layer hands back its attention probabilities [B, heads, N, N]
  // (HuggingFace's output_attentions). BERT's attention then runs its explicit
  // path: the fused kernel of LibTorch 2.x gives no probabilities (HF's sdpa
  // attention falls back to its eager one alike).
  bool output_attentions = false;

  // Projected Attention Layers and similar adapters running in parallel to a
  // layer: called with the layer index and the layer's input, its result is
  // added before the layer's output LayerNorm. Empty: no adapter. EMD passes
  // reuse the last layer, and with it its adapter (called with their query
  // input).
  std::function<torch::Tensor(int64_t layer, const torch::Tensor& layer_input)> parallel_adapter;
};

// [B, N] 0/1 mask -> [B, 1, 1, N] additive bias in `dtype`, as HuggingFace's
// `get_extended_attention_mask`: (1 - mask) * lowest(dtype). An undefined mask
// (nothing padded, TokenBatch::encoder_mask) gives an undefined bias.
torch::Tensor attention_bias_from_mask(const torch::Tensor& attention_mask, torch::ScalarType dtype);

}  // namespace mtbert
