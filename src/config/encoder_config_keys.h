#pragma once
// model.config in the schema: the HuggingFace config.json keys an experiment
// or a pretraining config may set over the encoder's config (the pretrained
// folder's, or bert-base's shape for a random encoder), each with its type
// and its meaning. A key left out keeps the folder's value, so model.config is
// kept as the JSON of the keys given (merged over config.json when the run
// starts); the values are checked together once merged
// (models/model_config.h, ModelConfig::validate).
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config_reader.h"

namespace mtbert {

struct EncoderConfigKey {
  enum class Type { text, integer, number, boolean, terms };
  const char* name;
  Type type;
  const char* doc;  // for docs/config-reference.md
};

// In models/model_config.h's order (model_config_from_json reads each).
const std::vector<EncoderConfigKey>& encoder_config_keys();

// The type of a key as docs/config-reference.md names it.
std::string encoder_key_type(EncoderConfigKey::Type type);

// Reads the map under `key` of `section` (model.config) as JSON: a key not
// in encoder_config_keys() or a value not of its type is a UserError at the
// value's origin ("file:line: model.config.hidden_size: expected an integer,
// got 'big'"), with a "did you mean" for a misspelled key. A run folder's own
// config.resolved.yaml, written by versions that accepted any key, keeps its
// keys as they are, so that the run resumes.
nlohmann::json read_encoder_config(ConfigReader& section, std::string_view key);

}  // namespace mtbert
