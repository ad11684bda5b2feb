#pragma once
// An encoder with HuggingFace's masked-language-model head, under
// BertForMaskedLM's names (DeBERTa-v2's MLM model uses the same ones):
//
//   cls.predictions.transform.dense       hidden -> embedding width
//   cls.predictions.transform.LayerNorm
//   cls.predictions.bias                  [vocab]
//   logits = LN(act(dense(h))) @ word_embeddings^T + bias
//
// The decoder is the word embedding table itself (tied: one tensor, so it
// stays tied through optimizer steps, saving and loading). For DeBERTa-style
// configs the encoder's EMD passes (config.emd_layers) run before the head,
// as in the DeBERTa paper's decoder. logits_at() projects only the masked
// positions: the vocabulary projection is most of the head's work.
#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include "core/safetensors.h"
#include "core/token_batch.h"
#include "models/bert_model.h"

namespace mtbert {

// cls.predictions: the transform and the output bias (the decoder weight is
// the encoder's word embedding table).
class MlmPredictionsImpl : public torch::nn::Module {
 public:
  explicit MlmPredictionsImpl(const ModelConfig& config);
  // hidden [M, H], word_embeddings [V, E] -> logits [M, V].
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& word_embeddings);

  std::shared_ptr<torch::nn::Module> transform;
  torch::nn::Linear dense{nullptr};       // transform.dense
  torch::nn::LayerNorm LayerNorm{nullptr};  // transform.LayerNorm
  torch::Tensor bias;

 private:
  std::string activation_;
};
TORCH_MODULE(MlmPredictions);

class MaskedLmImpl : public torch::nn::Module {
 public:
  // A random encoder (no pooler: pretraining does not train it).
  explicit MaskedLmImpl(const ModelConfig& config);
  // An encoder from elsewhere (a model folder), with a fresh head.
  explicit MaskedLmImpl(BertModel encoder);

  // Logits [M, V] at `positions`, flat indices into the [B, N] inputs.
  torch::Tensor logits_at(const TokenBatch& inputs, const torch::Tensor& positions);
  // Logits at every position, [B, N, V] (fill-mask, encode).
  torch::Tensor logits(const TokenBatch& inputs);

  // The head's tensors, "cls.predictions.*", for a model folder, and back
  // (UserError naming `source` for a missing or misshapen tensor).
  NamedTensors head_state() const;
  void load_head(const NamedTensors& head, const std::string& source);
  void initialize_head();

  BertModel bert{nullptr};
  std::shared_ptr<torch::nn::Module> cls;
  MlmPredictions predictions{nullptr};
};
TORCH_MODULE(MaskedLm);

// Prefix of the MLM head's tensors in a model folder's model.safetensors.
inline constexpr const char* kMlmHeadPrefix = "cls.predictions.";

}  // namespace mtbert
