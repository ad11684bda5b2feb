#pragma once
// The encoder's hyper-parameters, read from a HuggingFace `config.json` under
// HuggingFace's own key names, so a converted model folder needs no second
// config format.
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace mtbert {

struct ModelConfig {
  std::string model_type = "bert";
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  // "gelu" (erf form, HF's default), "gelu_new"/"gelu_pytorch_tanh" (tanh
  // approximation) or "relu".
  std::string hidden_act = "gelu";
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  int64_t pad_token_id = 0;
  // Standard deviation of the normal initialization of a fresh model.
  double initializer_range = 0.02;

  int64_t head_dim() const { return hidden_size / num_attention_heads; }

  // Throws UserError naming `where` (a file, or a config key path) for values
  // no encoder can be built from.
  void validate(const std::string& where) const;
};

// Reads the keys above from a parsed config.json; absent keys keep their
// defaults, keys of the wrong type are a UserError naming `where` and the key.
// Unknown keys are ignored: HF configs carry many that do not concern us.
ModelConfig model_config_from_json(const nlohmann::json& json, const std::string& where);
ModelConfig read_model_config(const std::filesystem::path& config_json);

// The HF-keyed JSON of a config (what a model folder's config.json holds).
nlohmann::json model_config_to_json(const ModelConfig& config);

}  // namespace mtbert
