#pragma once
// Word + position + token-type embeddings, LayerNorm, dropout: HuggingFace's
// `BertEmbeddings`, with the same submodule names. With DeBERTa's options
// (DebertaV2Embeddings): no absolute positions at the input
// (position_biased_input false), no token types (type_vocab_size 0), and
// embeddings narrower than the hidden size projected up by `embed_proj`.
#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include "models/dropout.h"
#include "models/model_config.h"

namespace mtbert {

class BertEmbeddingsImpl : public torch::nn::Module {
 public:
  explicit BertEmbeddingsImpl(const ModelConfig& config);

  // input_ids, token_type_ids: [B, N] int64 (token_type_ids may be undefined:
  // all zeros; ignored without token type embeddings). Returns [B, N, H].
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids);

  // forward() in two halves: the sum of word, token type and position
  // embeddings (projected by embed_proj), [B, N, H], which is the input of
  // the LayerNorm; then LayerNorm and dropout. SiFT perturbs the sum.
  torch::Tensor sum(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids);
  torch::Tensor normalize(const torch::Tensor& sum);

  // [1, N, E] absolute position embeddings of positions 0..N-1 (EMD's input).
  torch::Tensor absolute_positions(int64_t length) const;

  torch::nn::Embedding word_embeddings{nullptr};
  torch::nn::Embedding position_embeddings{nullptr};    // null when neither the input nor EMD uses them
  torch::nn::Embedding token_type_embeddings{nullptr};  // null when type_vocab_size is 0
  torch::nn::Linear embed_proj{nullptr};                // E -> H without bias, when embedding_size != hidden_size
  torch::nn::LayerNorm LayerNorm{nullptr};
  Dropout dropout{nullptr};

 private:
  bool position_biased_input_;
};
TORCH_MODULE(BertEmbeddings);

}  // namespace mtbert
