#include "models/top_pal.h"

#include <torch/torch.h>

#include "models/weight_init.h"

namespace mtbert {

TopPalImpl::TopPalImpl(const ModelConfig& c, const PalConfig& pals) {
  const int64_t r = pals.rank;
  encoder = register_module("encoder", torch::nn::Linear(c.hidden_size, r));
  attention = register_module("attention", ProjectedSelfAttention(r, pals.heads, c.attention_probs_dropout_prob,
                                                                        /*with_output=*/true));
  LayerNorm = register_module("LayerNorm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({r}).eps(c.layer_norm_eps)));
  intermediate = register_module("intermediate", torch::nn::Linear(r, 4 * r));
  output = register_module("output", torch::nn::Linear(4 * r, r));
  decoder = register_module("decoder", torch::nn::Linear(r, c.hidden_size));
  initialize_bert_style(*this, c.initializer_range);
}

torch::Tensor TopPalImpl::forward(const torch::Tensor& hidden, const torch::Tensor& attention_bias) {
  auto x = encoder(hidden);
  x = LayerNorm(x + attention(x, attention_bias));
  x = output(torch::gelu(intermediate(x)));
  return decoder(x);
}

}  // namespace mtbert
