#include "models/parallel_pals.h"

#include <torch/torch.h>

#include "models/projected_attention.h"
#include "models/weight_init.h"

namespace mtbert {

ParallelPalsImpl::ParallelPalsImpl(const ModelConfig& c, const PalConfig& pals) {
  encoder = register_module("encoder", torch::nn::Linear(c.hidden_size, pals.rank));
  decoder = register_module("decoder", torch::nn::Linear(pals.rank, c.hidden_size));
  layer = register_module("layer", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    layer->push_back(ProjectedSelfAttention(pals.rank, pals.heads, c.attention_probs_dropout_prob));
  initialize_bert_style(*this, c.initializer_range);
}

torch::Tensor ParallelPalsImpl::forward(int64_t layer_index, const torch::Tensor& layer_input,
                                        const torch::Tensor& attention_bias) {
  auto attended = layer[layer_index]->as<ProjectedSelfAttention>()->forward(encoder(layer_input), attention_bias);
  return torch::gelu(decoder(attended));
}

}  // namespace mtbert
