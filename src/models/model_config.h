#pragma once
// The encoder's hyper-parameters, read from a HuggingFace `config.json` under
// HuggingFace's own key names, so a converted model folder needs no second
// config format.
//
// Two model types: "bert" (HF BertConfig) and "deberta-v2" (HF DebertaV2Config,
// DeBERTa-v2 and -v3). They share one encoder; what DeBERTa adds is switched
// on by keys, whatever the model_type, so a BERT checkpoint can be run with
// disentangled attention (`relative_attention: true`) and a DeBERTa one
// without absolute positions. Absent keys take the HF default of the
// config's model_type.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

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

  // --- DeBERTa (HF DebertaV2Config's names and meanings) ---
  // Disentangled attention: content-to-position / position-to-content terms
  // over relative position embeddings shared by all layers.
  bool relative_attention = false;
  // Maximum relative distance k; < 1 means max_position_embeddings.
  int64_t max_relative_positions = -1;
  // > 0: log-bucketed relative positions (DeBERTa-v2/v3) with this many
  // buckets per direction, which then is k. <= 0: plain clamped distances.
  int64_t position_buckets = -1;
  // Which position terms: any of "c2p", "p2c" and "p2p" (config.json: a list,
  // or a "p2c|c2p" string). They also set the score scale sqrt(d * (1 +
  // count)). "p2p", position-to-position, is the fourth term of the DeBERTa
  // paper's eq. 2, which the paper drops and HF does not implement.
  std::vector<std::string> pos_att_type;
  // Position keys/queries from the content key/query projections (true) or
  // from separate pos_key_proj / pos_query_proj (false).
  bool share_att_key = false;
  // "none" or "layer_norm": LayerNorm the relative embeddings (encoder.LayerNorm).
  std::string norm_rel_ebd = "none";
  // Absolute position embeddings added at the input.
  bool position_biased_input = true;
  // Width of the token embeddings; < 1 (or absent) means hidden_size. When it
  // differs, embeddings.embed_proj maps it onto hidden_size.
  int64_t embedding_size = -1;

  // --- mtbert's own key ---
  // Enhanced mask decoder (DeBERTa's EMD; enhanced_mask_decoder.h): this many
  // passes through the last encoder layer in place of its own pass, on the
  // second-to-last layer's output H: the first with query = H + absolute
  // position embeddings and key/value = H, each next one with the previous
  // output as query. 0: off; the report's EMD is 2.
  int64_t emd_layers = 0;

  int64_t head_dim() const { return hidden_size / num_attention_heads; }
  int64_t embedding_width() const { return embedding_size < 1 ? hidden_size : embedding_size; }
  bool has_c2p() const;
  bool has_p2c() const;
  bool has_p2p() const;
  // Disentangled attention module (any DeBERTa score term or its scale) rather
  // than BERT's self-attention.
  bool disentangled() const { return relative_attention || !pos_att_type.empty(); }
  // k: relative distances are clamped to [-k, k) and the relative embedding
  // table has 2k rows.
  int64_t relative_span() const;
  int64_t effective_max_relative_positions() const {
    return max_relative_positions < 1 ? max_position_embeddings : max_relative_positions;
  }
  bool layer_norm_relative_embeddings() const { return norm_rel_ebd == "layer_norm"; }
  // The absolute position table exists when the input uses it or EMD does.
  bool has_position_embeddings() const { return position_biased_input || emd_layers > 0; }

  // The encoder's parameters (embeddings, layers, relative embeddings,
  // pooler), counted without allocating; saturates instead of overflowing.
  int64_t parameter_count() const;

  // Throws UserError naming `where` (a file, or a config key path) for values
  // no encoder can be built from, sizes beyond core/limits.h included.
  void validate(const std::string& where) const;

  // Throws UserError when the encoder's weights alone would not fit in this
  // machine's memory (checked before they are allocated).
  void check_fits_memory() const;
};

// Reads the keys above from a parsed config.json; absent keys keep the
// defaults of its model_type, keys of the wrong type are a UserError naming
// `where` and the key. Unknown keys are ignored: HF configs carry many that do
// not concern us. Keys that change the architecture in ways mtbert does not
// implement (DeBERTa-v2's conv_kernel_size, a different attention_head_size,
// BERT's relative position_embedding_type) are refused.
ModelConfig model_config_from_json(const nlohmann::json& json, const std::string& where);
ModelConfig read_model_config(const std::filesystem::path& config_json);

// The HF-keyed JSON of a config (what a model folder's config.json holds).
nlohmann::json model_config_to_json(const ModelConfig& config);

// DeBERTa-v3's attention on any shape: disentangled attention with the given
// position terms, log-bucketed distances (256 buckets, max 512), position
// projections shared with the content ones, LayerNorm-ed relative embeddings,
// no absolute positions; token types left as they are. The benchmarks'
// DeBERTa-style encoder.
void use_deberta_v3_attention(ModelConfig& config, std::vector<std::string> pos_att_type);

// The keys model_config_from_json reads: overrides of a model folder's config
// may only use these.
const std::vector<std::string>& model_config_keys();

}  // namespace mtbert
