#include "models/bert_embeddings.h"

#include <torch/torch.h>

namespace mtbert {

BertEmbeddingsImpl::BertEmbeddingsImpl(const ModelConfig& c) : position_biased_input_(c.position_biased_input) {
  const int64_t width = c.embedding_width();
  word_embeddings = register_module(
      "word_embeddings",       // The padding row gets no gradient, as in HuggingFace.
      torch::nn::Embedding(torch::nn::EmbeddingOptions(c.vocab_size, width).padding_idx(c.pad_token_id)));
  if (c.has_position_embeddings()) {
    position_embeddings = register_module(
        "position_embeddings", torch::nn::Embedding(torch::nn::EmbeddingOptions(c.max_position_embeddings, width)));
  }
  if (c.type_vocab_size > 0) {
    token_type_embeddings = register_module(
        "token_type_embeddings", torch::nn::Embedding(torch::nn::EmbeddingOptions(c.type_vocab_size, width)));
  }
  if (width != c.hidden_size) {
    embed_proj = register_module("embed_proj",
                                 torch::nn::Linear(torch::nn::LinearOptions(width, c.hidden_size).bias(false)));
  }
  LayerNorm = register_module(
      "LayerNorm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps)));
  dropout = register_module("dropout", Dropout(c.hidden_dropout_prob));
}

torch::Tensor BertEmbeddingsImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids) {
  return normalize(sum(input_ids, token_type_ids));
}

torch::Tensor BertEmbeddingsImpl::sum(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids) {
  const int64_t seq_len = input_ids.size(1);
  // Positions are 0..N-1 for every row (HF's default position_ids), built on
  // the model's device: no host round trip.
  auto positions = torch::arange(seq_len, torch::TensorOptions().dtype(torch::kLong).device(input_ids.device()));
  // Summed in HuggingFace's order (word + type, then + position) so float
  // rounding matches it too.
  auto x = word_embeddings(input_ids);
  if (token_type_embeddings) {
    if (token_type_ids.defined()) {
      x = x + token_type_embeddings(token_type_ids);
    } else {
      // All segment 0: one row of the table, broadcast.
      x = x + token_type_embeddings->weight[0];
    }
  }
  if (position_biased_input_) x = x + position_embeddings(positions).unsqueeze(0);
  if (embed_proj) x = embed_proj(x);
  return x;
}

torch::Tensor BertEmbeddingsImpl::normalize(const torch::Tensor& sum) { return dropout(LayerNorm(sum)); }

torch::Tensor BertEmbeddingsImpl::absolute_positions(int64_t length) const {
  return position_embeddings->weight.narrow(0, 0, length).unsqueeze(0);
}

}  // namespace mtbert
