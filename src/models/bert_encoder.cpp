#include "models/bert_encoder.h"

#include <utility>

#include <torch/torch.h>

namespace mtbert {

BertEncoderImpl::BertEncoderImpl(const ModelConfig& c) {
  layer = register_module("layer", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layer->push_back(BertLayer(c, i));
  if (c.relative_attention) {
    rel_embeddings = register_module(
        "rel_embeddings", torch::nn::Embedding(torch::nn::EmbeddingOptions(2 * c.relative_span(), c.hidden_size)));
    relative_positions_ = std::make_shared<RelativePositionCache>(c);
  }
  // HF creates it whenever norm_rel_ebd says so, relative attention or not.
  if (c.layer_norm_relative_embeddings()) {
    LayerNorm = register_module(
        "LayerNorm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps)));
  }
}

void BertEncoderImpl::add_relative_positions(EncoderContext& ctx, int64_t length, const torch::Device& device) {
  if (!rel_embeddings) return;
  RelativePositions positions = relative_positions_->get(length, device);
  // Only the rows this length uses (LayerNorm is per row, so normalizing the
  // slice equals slicing the normalized table).
  auto rows = rel_embeddings->weight.narrow(0, positions.first, positions.span);
  ctx.relative_embeddings = LayerNorm ? LayerNorm(rows) : rows;
  ctx.relative_plan = positions.plan;
}

void BertEncoderImpl::set_banded_positions(bool banded) {
  if (relative_positions_) relative_positions_->set_banded(banded);
}

EncoderOutput BertEncoderImpl::forward(torch::Tensor hidden, const EncoderContext& ctx, int64_t layers) {
  const int64_t count = layers < 0 ? static_cast<int64_t>(layer->size()) : layers;
  EncoderOutput out;
  for (int64_t i = 0; i < count; ++i) {
    AttentionOutput layer_out = layer[i]->as<BertLayer>()->forward(hidden, ctx);
    hidden = std::move(layer_out.hidden);
    if (ctx.output_attentions) out.attentions.push_back(std::move(layer_out.probs));
  }
  out.last_hidden_state = std::move(hidden);
  return out;
}

}  // namespace mtbert
