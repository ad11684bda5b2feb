#pragma once
// The stack of layers: HuggingFace's `BertEncoder` (`layer.0`, `layer.1`, ...),
// and for disentangled attention DebertaV2Encoder's relative embeddings
// (`rel_embeddings`, shared by all layers) and their optional `LayerNorm`.
#include <memory>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>

#include "models/bert_layer.h"
#include "models/relative_position.h"

namespace mtbert {

struct EncoderOutput {
  torch::Tensor last_hidden_state;        // [B, N, H]
  torch::Tensor pooler_output;            // [B, H]; undefined for a model without pooler (BertModel's)
  std::vector<torch::Tensor> attentions;  // per layer [B, heads, N, N], when requested (EMD passes last)
};

class BertEncoderImpl : public torch::nn::Module {
 public:
  explicit BertEncoderImpl(const ModelConfig& config);
  // Runs the first `layers` layers (all of them when negative); each one's
  // attention probabilities are collected when ctx.output_attentions.
  EncoderOutput forward(torch::Tensor hidden, const EncoderContext& ctx, int64_t layers = -1);

  // Sets ctx.relative_embeddings and ctx.relative_plan for sequences of
  // `length` on `device` (a no-op without relative attention). Once per
  // forward pass: the layers (and EMD passes) share them.
  void add_relative_positions(EncoderContext& ctx, int64_t length, const torch::Device& device);

  // Banded position GEMMs where they pay (the default) or never; for
  // benchmarks of the band itself (relative_position.h).
  void set_banded_positions(bool banded);

  torch::nn::ModuleList layer{nullptr};
  torch::nn::Embedding rel_embeddings{nullptr};  // [2k, H], with relative_attention
  torch::nn::LayerNorm LayerNorm{nullptr};       // with norm_rel_ebd "layer_norm"

 private:
  std::shared_ptr<RelativePositionCache> relative_positions_;
};
TORCH_MODULE(BertEncoder);

}  // namespace mtbert
