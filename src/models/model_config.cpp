#include "models/model_config.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/json_file.h"
#include "core/limits.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

template <typename T>
void read_key(const nlohmann::json& json, const char* key, T& out, const std::string& where) {
  auto it = json.find(key);
  if (it == json.end() || it->is_null()) return;
  const bool ok = [&] {
    if constexpr (std::is_same_v<T, std::string>) return it->is_string();
    else if constexpr (std::is_same_v<T, bool>) return it->is_boolean();
    else if constexpr (std::is_integral_v<T>) return it->is_number_integer();
    else return it->is_number();
  }();
  if (!ok) {
    const char* expected = std::is_same_v<T, std::string> ? "a string"
                           : std::is_same_v<T, bool>      ? "true or false"
                           : std::is_integral_v<T>        ? "an integer"
                                                          : "a number";
    throw UserError(fmt::format("{}: key \"{}\" must be {}, got {}", where, key, expected, json_text(*it)));
  }
  out = it->get<T>();
}

std::string trimmed_lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// HF accepts a list or a "p2c|c2p" string (DeBERTa-v3's config.json has the
// string); both become a list of lower-case names, duplicates dropped.
std::vector<std::string> read_pos_att_type(const nlohmann::json& json, const std::string& where) {
  auto it = json.find("pos_att_type");
  if (it == json.end() || it->is_null()) return {};
  std::vector<std::string> parts;
  if (it->is_string()) {
    std::string s = it->get<std::string>();
    size_t start = 0;
    while (start <= s.size()) {
      const size_t bar = s.find('|', start);
      parts.push_back(s.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
  } else if (it->is_array()) {
    for (const auto& item : *it) {
      if (!item.is_string())
        throw UserError(fmt::format("{}: key \"pos_att_type\" must list strings, got {}", where, json_text(*it)));
      parts.push_back(item.get<std::string>());
    }
  } else {
    throw UserError(fmt::format("{}: key \"pos_att_type\" must be a list or a \"c2p|p2c|p2p\" string, got {}", where,
                                json_text(*it)));
  }
  std::vector<std::string> result;
  for (auto& part : parts) {
    part = trimmed_lower(part);
    if (part.empty() || part == "none") continue;
    if (std::find(result.begin(), result.end(), part) == result.end()) result.push_back(part);
  }
  return result;
}

std::string read_norm_rel_ebd(const nlohmann::json& json, const std::string& where) {
  std::string raw = "none";
  read_key(json, "norm_rel_ebd", raw, where);
  // HF splits on "|" and looks for "layer_norm"; "none" is its default.
  bool layer_norm = false;
  size_t start = 0;
  while (true) {
    const size_t bar = raw.find('|', start);
    const std::string part = trimmed_lower(raw.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
    if (part == "layer_norm") {
      layer_norm = true;
    } else if (part != "none" && !part.empty()) {
      throw UserError(fmt::format("{}: norm_rel_ebd \"{}\" is not supported (\"none\" or \"layer_norm\")", where, raw));
    }
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return layer_norm ? "layer_norm" : "none";
}

// HF DebertaV2Config's defaults where they differ from BertConfig's.
void apply_deberta_v2_defaults(ModelConfig& c) {
  c.vocab_size = 128100;
  c.hidden_size = 1536;
  c.num_hidden_layers = 24;
  c.num_attention_heads = 24;
  c.intermediate_size = 6144;
  c.type_vocab_size = 0;
  c.layer_norm_eps = 1e-7;
}

// Architecture switches of HF configs that mtbert does not implement: refused,
// so that such a checkpoint cannot run as a silently different model.
void refuse_unsupported(const nlohmann::json& json, const ModelConfig& c, const std::string& where) {
  if (auto it = json.find("position_embedding_type"); it != json.end() && !it->is_null() && *it != "absolute")
    throw UserError(fmt::format("{}: position_embedding_type {} is not supported (only \"absolute\"; DeBERTa's "
                                "relative positions are \"relative_attention\": true)",
                                where, json_text(*it)));
  if (auto it = json.find("conv_kernel_size"); it != json.end() && it->is_number() && it->get<double>() > 0)
    throw UserError(fmt::format("{}: conv_kernel_size {} (DeBERTa-v2's convolution layer) is not supported", where,
                                json_text(*it)));
  if (auto it = json.find("attention_head_size"); it != json.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() * c.num_attention_heads != c.hidden_size)
      throw UserError(fmt::format("{}: attention_head_size {} is not supported (only hidden_size / "
                                  "num_attention_heads)",
                                  where, json_text(*it)));
  }
}

}  // namespace

bool ModelConfig::has_c2p() const {
  return std::find(pos_att_type.begin(), pos_att_type.end(), "c2p") != pos_att_type.end();
}

bool ModelConfig::has_p2c() const {
  return std::find(pos_att_type.begin(), pos_att_type.end(), "p2c") != pos_att_type.end();
}

bool ModelConfig::has_p2p() const {
  return std::find(pos_att_type.begin(), pos_att_type.end(), "p2p") != pos_att_type.end();
}

int64_t ModelConfig::relative_span() const {
  return position_buckets > 0 ? position_buckets : effective_max_relative_positions();
}

int64_t ModelConfig::parameter_count() const {
  // In double: exact far beyond the limits, and no overflow for any input.
  const double h = static_cast<double>(hidden_size), e = static_cast<double>(embedding_width()),
               i = static_cast<double>(intermediate_size);
  double count = (static_cast<double>(vocab_size) + static_cast<double>(max_position_embeddings) +
                  static_cast<double>(type_vocab_size) + 2) * e;
  if (e != h) count += e * h + h;
  count += static_cast<double>(num_hidden_layers) * (4 * (h * h + h) + 2 * h * i + i + h + 4 * h);
  if (relative_attention) count += 2 * static_cast<double>(relative_span()) * h + 2 * h;
  count += h * h + h;  // the pooler
  return count >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(count);
}

void ModelConfig::check_fits_memory() const {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return;
  const double memory = static_cast<double>(pages) * static_cast<double>(page);
  const double weights = static_cast<double>(parameter_count()) * 4;
  if (weights > memory)
    throw UserError(fmt::format("model.config: an encoder of {:.3g} parameters (vocab_size {}, hidden_size {}, "
                                "num_hidden_layers {}, intermediate_size {}) needs {:.1f} GB for its weights alone, "
                                "and this machine has {:.1f} GB",
                                static_cast<double>(parameter_count()), vocab_size, hidden_size, num_hidden_layers,
                                intermediate_size, weights / 1e9, memory / 1e9));
}

void ModelConfig::validate(const std::string& where) const {
  auto require = [&](bool ok, const std::string& what) {
    if (!ok) throw UserError(fmt::format("{}: {}", where, what));
  };
  auto at_most = [&](int64_t value, int64_t limit, const char* key) {
    require(value <= limit, fmt::format("{} {} is above the limit of {}", key, value, limit));
  };
  at_most(vocab_size, limits::kVocabSize, "vocab_size");
  at_most(hidden_size, limits::kHiddenSize, "hidden_size");
  at_most(embedding_size, limits::kHiddenSize, "embedding_size");
  at_most(intermediate_size, limits::kIntermediateSize, "intermediate_size");
  at_most(num_hidden_layers, limits::kLayers, "num_hidden_layers");
  at_most(num_attention_heads, limits::kAttentionHeads, "num_attention_heads");
  at_most(max_position_embeddings, limits::kPositions, "max_position_embeddings");
  at_most(max_relative_positions, limits::kPositions, "max_relative_positions");
  at_most(position_buckets, limits::kPositions, "position_buckets");
  at_most(type_vocab_size, limits::kTypeVocab, "type_vocab_size");
  at_most(emd_layers, limits::kLayers, "emd_layers");
  require(model_type == "bert" || model_type == "deberta-v2",
          fmt::format("model_type \"{}\" is not supported (\"bert\" or \"deberta-v2\")", model_type));
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

  for (const auto& term : pos_att_type)
    require(term == "c2p" || term == "p2c" || term == "p2p",
            fmt::format("pos_att_type \"{}\" is not supported (\"c2p\", \"p2c\", \"p2p\")", term));
  require(norm_rel_ebd == "none" || norm_rel_ebd == "layer_norm",
          fmt::format("norm_rel_ebd \"{}\" is not supported (\"none\" or \"layer_norm\")", norm_rel_ebd));
  if (position_buckets > 0) {
    // The log-bucket formula divides by log((max_relative_positions - 1) / (buckets / 2)).
    const int64_t mid = position_buckets / 2;
    require(mid >= 1 && effective_max_relative_positions() - 1 > mid,
            fmt::format("position_buckets {} needs 2 <= position_buckets and max_relative_positions ({}) - 1 > "
                        "position_buckets / 2",
                        position_buckets, effective_max_relative_positions()));
  }
  require(emd_layers >= 0, fmt::format("emd_layers must be >= 0, got {}", emd_layers));
  require(parameter_count() <= limits::kModelParameters,
          fmt::format("an encoder of {:.3g} parameters is above the limit of {:.3g} (vocab_size {}, hidden_size {}, "
                      "num_hidden_layers {}, intermediate_size {})",
                      static_cast<double>(parameter_count()), static_cast<double>(limits::kModelParameters), vocab_size,
                      hidden_size, num_hidden_layers, intermediate_size));
  if (emd_layers > 0) {
    require(num_hidden_layers >= 1, "emd_layers > 0 needs at least one encoder layer to reuse");
    require(embedding_width() == hidden_size,
            fmt::format("emd_layers > 0 adds absolute position embeddings to the hidden states, so embedding_size "
                        "({}) must equal hidden_size ({})",
                        embedding_width(), hidden_size));
  }
}

ModelConfig model_config_from_json(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) throw UserError(fmt::format("{}: expected a JSON object", where));
  ModelConfig c;
  read_key(json, "model_type", c.model_type, where);
  if (c.model_type == "deberta-v2") apply_deberta_v2_defaults(c);
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
  read_key(json, "relative_attention", c.relative_attention, where);
  read_key(json, "max_relative_positions", c.max_relative_positions, where);
  read_key(json, "position_buckets", c.position_buckets, where);
  c.pos_att_type = read_pos_att_type(json, where);
  read_key(json, "share_att_key", c.share_att_key, where);
  c.norm_rel_ebd = read_norm_rel_ebd(json, where);
  read_key(json, "position_biased_input", c.position_biased_input, where);
  read_key(json, "embedding_size", c.embedding_size, where);
  read_key(json, "emd_layers", c.emd_layers, where);
  refuse_unsupported(json, c, where);
  c.validate(where);
  return c;
}

ModelConfig read_model_config(const std::filesystem::path& config_json) {
  return model_config_from_json(read_json_file(config_json), config_json.string());
}

nlohmann::json model_config_to_json(const ModelConfig& c) {
  nlohmann::json json = {
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
  // DeBERTa's keys are written only where they matter, so a BERT folder's
  // config.json stays what HF's BertConfig writes.
  if (c.model_type == "deberta-v2" || c.disentangled() || !c.position_biased_input || c.embedding_size > 0 ||
      c.layer_norm_relative_embeddings()) {
    json["relative_attention"] = c.relative_attention;
    json["max_relative_positions"] = c.max_relative_positions;
    json["position_buckets"] = c.position_buckets;
    json["pos_att_type"] = c.pos_att_type;
    json["share_att_key"] = c.share_att_key;
    json["norm_rel_ebd"] = c.norm_rel_ebd;
    json["position_biased_input"] = c.position_biased_input;
    if (c.embedding_size > 0) json["embedding_size"] = c.embedding_size;
  }
  if (c.emd_layers > 0) json["emd_layers"] = c.emd_layers;
  return json;
}

void use_deberta_v3_attention(ModelConfig& c, std::vector<std::string> pos_att_type) {
  c.model_type = "deberta-v2";
  c.relative_attention = true;
  c.position_buckets = 256;
  c.max_relative_positions = 512;
  c.pos_att_type = std::move(pos_att_type);
  c.share_att_key = true;
  c.norm_rel_ebd = "layer_norm";
  c.position_biased_input = false;
}

const std::vector<std::string>& model_config_keys() {
  static const std::vector<std::string> keys = {
      "model_type", "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
      "hidden_act", "hidden_dropout_prob", "attention_probs_dropout_prob", "max_position_embeddings",
      "type_vocab_size", "layer_norm_eps", "pad_token_id", "initializer_range", "relative_attention",
      "max_relative_positions", "position_buckets", "pos_att_type", "share_att_key", "norm_rel_ebd",
      "position_biased_input", "embedding_size", "emd_layers"};
  return keys;
}

}  // namespace mtbert
