#pragma once
// The BERT encoder: HuggingFace's `BertModel` (embeddings, encoder, pooler),
// with parameter names that map one-to-one onto its state dict.
#include <vector>

#include <torch/nn/module.h>

#include "models/bert_embeddings.h"
#include "models/bert_encoder.h"
#include "models/bert_pooler.h"
#include "models/encoder_context.h"
#include "models/model_config.h"

namespace mtbert {

struct BertModelOptions {
  bool with_pooler = true;
};

class BertModelImpl : public torch::nn::Module {
 public:
  explicit BertModelImpl(const ModelConfig& config, BertModelOptions options = {});

  // input_ids, attention_mask: [B, N]; token_type_ids may be undefined (all 0).
  // An undefined attention_mask says that nothing is padded: attention then
  // runs without a bias (TokenBatch::encoder_mask gives it so).
  EncoderOutput forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                        const torch::Tensor& token_type_ids = {}, bool output_attentions = false);

  // The two halves of forward(), for callers that change what flows between
  // them (SMART perturbs the embeddings, PALs add a per-layer adapter):
  // embed() gives the embedding output [B, N, H]; encode() runs the layers,
  // the EMD passes (config.emd_layers) and the pooler on it. encode() fills
  // ctx.attention_bias from the mask (once per pass, in the dtype of the
  // attention scores) and the relative positions.
  torch::Tensor embed(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids);
  EncoderOutput encode(const torch::Tensor& embeddings, const torch::Tensor& attention_mask, EncoderContext ctx,
                       bool output_attentions = false);
  // encode() in two halves, for callers that change the last hidden state
  // before the pooler reads it (the top PAL block): the layers and EMD
  // passes, then the pooler's output added (when the model has a pooler).
  EncoderOutput run_layers(const torch::Tensor& embeddings, const torch::Tensor& attention_mask, EncoderContext ctx,
                           bool output_attentions = false);
  EncoderOutput pooled(EncoderOutput out);

  // HuggingFace's initialization of a fresh model: N(0, initializer_range) for
  // linear and embedding weights, zero biases and padding row, unit LayerNorm.
  void initialize_weights();

  const ModelConfig& config() const { return config_; }

  BertEmbeddings embeddings{nullptr};
  BertEncoder encoder{nullptr};
  BertPooler pooler{nullptr};

 private:
  ModelConfig config_;
};
TORCH_MODULE(BertModel);

}  // namespace mtbert
