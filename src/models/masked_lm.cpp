#include "models/masked_lm.h"

#include <torch/torch.h>

#include "models/activation.h"
#include "models/module_state.h"
#include "models/weight_init.h"

namespace mtbert {

MlmPredictionsImpl::MlmPredictionsImpl(const ModelConfig& c) : activation_(c.hidden_act) {
  transform = register_module("transform", std::make_shared<torch::nn::Module>());
  dense = transform->register_module("dense", torch::nn::Linear(c.hidden_size, c.embedding_width()));
  LayerNorm = transform->register_module(
      "LayerNorm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.embedding_width()}).eps(c.layer_norm_eps)));
  bias = register_parameter("bias", torch::zeros({c.vocab_size}));
}

torch::Tensor MlmPredictionsImpl::forward(const torch::Tensor& hidden, const torch::Tensor& word_embeddings) {
  auto x = LayerNorm(dense_activation(dense, hidden, activation_));
  return torch::nn::functional::linear(x, word_embeddings, bias);
}

MaskedLmImpl::MaskedLmImpl(const ModelConfig& config) : MaskedLmImpl(BertModel(config, BertModelOptions{false})) {
  bert->initialize_weights();
}

MaskedLmImpl::MaskedLmImpl(BertModel encoder) {
  bert = register_module("bert", std::move(encoder));
  cls = register_module("cls", std::make_shared<torch::nn::Module>());
  predictions = cls->register_module("predictions", MlmPredictions(bert->config()));
  initialize_head();
}

void MaskedLmImpl::initialize_head() {
  initialize_bert_style(*predictions, bert->config().initializer_range);
  torch::NoGradGuard no_grad;
  predictions->bias.zero_();
}

torch::Tensor MaskedLmImpl::logits_at(const TokenBatch& inputs, const torch::Tensor& positions) {
  auto hidden = bert->forward(inputs.input_ids, inputs.encoder_mask(), inputs.token_type_ids).last_hidden_state;
  auto picked = hidden.reshape({-1, hidden.size(-1)}).index_select(0, positions);
  return predictions(picked, bert->embeddings->word_embeddings->weight);
}

torch::Tensor MaskedLmImpl::logits(const TokenBatch& inputs) {
  auto hidden = bert->forward(inputs.input_ids, inputs.encoder_mask(), inputs.token_type_ids).last_hidden_state;
  return predictions(hidden, bert->embeddings->word_embeddings->weight);
}

NamedTensors MaskedLmImpl::head_state() const {
  NamedTensors out;
  for (const auto& [name, tensor] : module_state(*predictions)) out[kMlmHeadPrefix + name] = tensor;
  return out;
}

void MaskedLmImpl::load_head(const NamedTensors& head, const std::string& source) {
  NamedTensors own;
  const size_t prefix = std::string(kMlmHeadPrefix).size();
  for (const auto& [name, tensor] : head) own[name.substr(prefix)] = tensor;
  load_module_state(*predictions, own, source);
}

}  // namespace mtbert
