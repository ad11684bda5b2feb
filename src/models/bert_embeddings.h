#pragma once
// Word + position + token-type embeddings, LayerNorm, dropout: HuggingFace's
// `BertEmbeddings`, with the same submodule names.
#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>

#include "models/model_config.h"

namespace mtbert {

class BertEmbeddingsImpl : public torch::nn::Module {
 public:
  explicit BertEmbeddingsImpl(const ModelConfig& config);

  // input_ids, token_type_ids: [B, N] int64 (token_type_ids may be undefined:
  // all zeros). Returns [B, N, H].
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids);

  // The same from already looked-up word embeddings [B, N, H]: the entry point
  // for perturbations of the word embeddings (SiFT) and for inputs_embeds.
  torch::Tensor forward_from_word_embeddings(const torch::Tensor& word_embeds, const torch::Tensor& token_type_ids);

  torch::nn::Embedding word_embeddings{nullptr};
  torch::nn::Embedding position_embeddings{nullptr};
  torch::nn::Embedding token_type_embeddings{nullptr};  // null when type_vocab_size is 0
  torch::nn::LayerNorm LayerNorm{nullptr};
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE(BertEmbeddings);

}  // namespace mtbert
