#include "config/encoder_config_keys.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/schema_visitors.h"
#include "core/did_you_mean.h"
#include "core/internal_error.h"
#include "models/model_config.h"

namespace mtbert {

const std::vector<EncoderConfigKey>& encoder_config_keys() {
  using T = EncoderConfigKey::Type;
  static const std::vector<EncoderConfigKey> keys = {
      {"model_type", T::text, "bert | deberta-v2: whose HuggingFace defaults the keys left out of the folder take"},
      {"vocab_size", T::integer, "rows of the token embedding table (the tokenizer's vocabulary must fit)"},
      {"hidden_size", T::integer, "width of the encoder"},
      {"num_hidden_layers", T::integer, "encoder layers"},
      {"num_attention_heads", T::integer, "attention heads of each layer (hidden_size is a multiple of it)"},
      {"intermediate_size", T::integer, "width of each layer's feed-forward block"},
      {"hidden_act", T::text, "gelu (erf form) | gelu_new, gelu_pytorch_tanh (tanh approximation) | relu"},
      {"hidden_dropout_prob", T::number, "dropout of the embeddings and of each sub-layer's output"},
      {"attention_probs_dropout_prob", T::number, "dropout of the attention probabilities"},
      {"max_position_embeddings", T::integer, "rows of the absolute position table: the longest sequence"},
      {"type_vocab_size", T::integer, "rows of the token type (segment) table"},
      {"layer_norm_eps", T::number, "epsilon of the LayerNorms"},
      {"pad_token_id", T::integer, "id of the padding token"},
      {"initializer_range", T::number, "standard deviation of a fresh encoder's normal initialization"},
      {"relative_attention", T::boolean, "DeBERTa's disentangled attention over relative position embeddings"},
      {"max_relative_positions", T::integer, "largest relative distance k; below 1: max_position_embeddings"},
      {"position_buckets", T::integer, "above 0: log-bucketed relative distances with this many buckets each way "
                                       "(DeBERTa-v2/v3)"},
      {"pos_att_type", T::terms, "the position terms of the attention scores: c2p, p2c, p2p (docs/deberta.md)"},
      {"share_att_key", T::boolean, "position keys and queries from the content projections, not their own"},
      {"norm_rel_ebd", T::text, "none | layer_norm: LayerNorm the relative embeddings"},
      {"position_biased_input", T::boolean, "add absolute position embeddings to the input"},
      {"embedding_size", T::integer, "width of the token embeddings, projected onto hidden_size; below 1: "
                                     "hidden_size"},
      {"emd_layers", T::integer, "DeBERTa's enhanced mask decoder: passes through the last layer (0: off; the "
                                 "report's: 2)"},
  };
  // The names are models/model_config.h's: a key added there is documented here.
  static const bool same_keys = [] {
    const auto& read = model_config_keys();
    bool same = read.size() == keys.size();
    for (std::size_t i = 0; same && i < keys.size(); ++i) same = read[i] == keys[i].name;
    return same;
  }();
  check_invariant(same_keys, "model.config's documented keys differ from model_config_keys()");
  return keys;
}

std::string encoder_key_type(EncoderConfigKey::Type type) {
  switch (type) {
    case EncoderConfigKey::Type::text: return "string";
    case EncoderConfigKey::Type::integer: return "integer";
    case EncoderConfigKey::Type::number: return "number";
    case EncoderConfigKey::Type::boolean: return "bool";
    case EncoderConfigKey::Type::terms: break;
  }
  return "list of strings, or one \"c2p|p2c\" string";
}

namespace {

bool written_by_a_run(const ConfigOrigin& origin) {
  return std::filesystem::path(origin.file).filename() == "config.resolved.yaml";
}

// The value of `key` in its type's JSON, read (and so checked) by `r`.
nlohmann::json read_value(ConfigReader& r, const EncoderConfigKey& key) {
  switch (key.type) {
    case EncoderConfigKey::Type::text: {
      std::string value;
      r.read(key.name, value);
      return value;
    }
    case EncoderConfigKey::Type::integer: {
      int64_t value = 0;
      r.read(key.name, value);
      return value;
    }
    case EncoderConfigKey::Type::number: {
      double value = 0;
      r.read(key.name, value);
      return value;
    }
    case EncoderConfigKey::Type::boolean: {
      bool value = false;
      r.read(key.name, value);
      return value;
    }
    case EncoderConfigKey::Type::terms: break;
  }
  // A list, or HuggingFace's "p2c|c2p" string: kept in the form given.
  std::vector<std::string> checked;
  r.read(key.name, checked);
  return config_node_to_json(*r.raw(key.name));
}

}  // namespace

nlohmann::json read_encoder_config(ConfigReader& section, std::string_view key) {
  const ConfigNode* node = section.raw(key);
  nlohmann::json json = nlohmann::json::object();
  if (!node) return json;
  section.check(node->is_map(), key,
                fmt::format("expected a section of HuggingFace config.json keys, got {}", describe_value(*node)));
  ConfigReader r = section.section(key);
  const auto& keys = encoder_config_keys();
  std::vector<std::string> names;
  for (const auto& k : keys) names.emplace_back(k.name);
  for (const auto& name : r.keys()) {
    const auto known = std::find(names.begin(), names.end(), name);
    if (known != names.end()) {
      json[name] = read_value(r, keys[static_cast<std::size_t>(known - names.begin())]);
    } else if (written_by_a_run(r.origin(name))) {
      json[name] = config_node_to_json(*r.raw(name));
    } else {
      const std::string suggestion = did_you_mean_suffix(name, names);
      r.fail(name, suggestion.empty()
                       ? fmt::format("not a key the encoder reads; those are {}", fmt::join(names, ", "))
                       : "not a key the encoder reads" + suggestion);
    }
  }
  return json;
}

}  // namespace mtbert
