#include "models/model_config.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_file.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

template <typename T>
void read_key(const nlohmann::json& json, const char* key, T& out, const std::string& where) {
  auto it = json.find(key);
  if (it == json.end() || it->is_null()) return;
  const bool ok = [&] {
    if constexpr (std::is_same_v<T, std::string>) return it->is_string();
    else if constexpr (std::is_integral_v<T>) return it->is_number_integer();
    else return it->is_number();
  }();
  if (!ok) {
    const char* expected = std::is_same_v<T, std::string> ? "a string"
                           : std::is_integral_v<T>        ? "an integer"
                                                          : "a number";
    throw UserError(fmt::format("{}: key \"{}\" must be {}, got {}", where, key, expected, it->dump()));
  }
  out = it->get<T>();
}

}  // namespace

void ModelConfig::validate(const std::string& where) const {
  auto require = [&](bool ok, const std::string& what) {
    if (!ok) throw UserError(fmt::format("{}: {}", where, what));
  };
  require(vocab_size > 0, fmt::format("vocab_size must be positive, got {}", vocab_size));
  require(hidden_size > 0, fmt::format("hidden_size must be positive, got {}", hidden_size));
  require(num_hidden_layers >= 0, fmt::format("num_hidden_layers must be >= 0, got {}", num_hidden_layers));
  require(num_attention_heads > 0 && hidden_size % num_attention_heads == 0,
          fmt::format("hidden_size {} is not a multiple of num_attention_heads {}", hidden_size,
                      num_attention_heads));
  require(intermediate_size > 0, fmt::format("intermediate_size must be positive, got {}", intermediate_size));
  require(hidden_act == "gelu" || hidden_act == "gelu_new" || hidden_act == "gelu_pytorch_tanh" ||
              hidden_act == "relu",
          fmt::format("hidden_act \"{}\" is not supported (gelu, gelu_new, gelu_pytorch_tanh, relu)", hidden_act));
  require(hidden_dropout_prob >= 0 && hidden_dropout_prob < 1,
          fmt::format("hidden_dropout_prob must be in [0, 1), got {}", hidden_dropout_prob));
  require(attention_probs_dropout_prob >= 0 && attention_probs_dropout_prob < 1,
          fmt::format("attention_probs_dropout_prob must be in [0, 1), got {}", attention_probs_dropout_prob));
  require(max_position_embeddings > 0,
          fmt::format("max_position_embeddings must be positive, got {}", max_position_embeddings));
  require(type_vocab_size >= 0, fmt::format("type_vocab_size must be >= 0, got {}", type_vocab_size));
  require(layer_norm_eps > 0, fmt::format("layer_norm_eps must be positive, got {}", layer_norm_eps));
  require(initializer_range > 0, fmt::format("initializer_range must be positive, got {}", initializer_range));
  require(pad_token_id >= 0 && pad_token_id < vocab_size,
          fmt::format("pad_token_id {} is outside the vocabulary of {}", pad_token_id, vocab_size));
}

ModelConfig model_config_from_json(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) throw UserError(fmt::format("{}: expected a JSON object", where));
  ModelConfig c;
  read_key(json, "model_type", c.model_type, where);
  read_key(json, "vocab_size", c.vocab_size, where);
  read_key(json, "hidden_size", c.hidden_size, where);
  read_key(json, "num_hidden_layers", c.num_hidden_layers, where);
  read_key(json, "num_attention_heads", c.num_attention_heads, where);
  read_key(json, "intermediate_size", c.intermediate_size, where);
  read_key(json, "hidden_act", c.hidden_act, where);
  read_key(json, "hidden_dropout_prob", c.hidden_dropout_prob, where);
  read_key(json, "attention_probs_dropout_prob", c.attention_probs_dropout_prob, where);
  read_key(json, "max_position_embeddings", c.max_position_embeddings, where);
  read_key(json, "type_vocab_size", c.type_vocab_size, where);
  read_key(json, "layer_norm_eps", c.layer_norm_eps, where);
  read_key(json, "pad_token_id", c.pad_token_id, where);
  read_key(json, "initializer_range", c.initializer_range, where);
  c.validate(where);
  return c;
}

ModelConfig read_model_config(const std::filesystem::path& config_json) {
  return model_config_from_json(read_json_file(config_json), config_json.string());
}

nlohmann::json model_config_to_json(const ModelConfig& c) {
  return {
      {"model_type", c.model_type},
      {"vocab_size", c.vocab_size},
      {"hidden_size", c.hidden_size},
      {"num_hidden_layers", c.num_hidden_layers},
      {"num_attention_heads", c.num_attention_heads},
      {"intermediate_size", c.intermediate_size},
      {"hidden_act", c.hidden_act},
      {"hidden_dropout_prob", c.hidden_dropout_prob},
      {"attention_probs_dropout_prob", c.attention_probs_dropout_prob},
      {"max_position_embeddings", c.max_position_embeddings},
      {"type_vocab_size", c.type_vocab_size},
      {"layer_norm_eps", c.layer_norm_eps},
      {"pad_token_id", c.pad_token_id},
      {"initializer_range", c.initializer_range},
  };
}

}  // namespace mtbert
