#include "train/pretrained_fit.h"

#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_file.h"
#include "core/user_error.h"
#include "models/model_config.h"
#include "models/pretrained_model.h"
#include "text/sentencepiece_tokenizer.h"
#include "text/tokenizer.h"
#include "text/wordpiece_tokenizer.h"

namespace mtbert {

namespace fs = std::filesystem;

namespace {

// How to use the encoder's own tokenizer, said in every refusal.
constexpr const char* kUseOwnTokenizer =
    "use the encoder's own tokenizer with model.tokenizer.kind=auto (or model.tokenizer=null)";

std::optional<std::string> special_id_difference(const SpecialTokenIds& given, const SpecialTokenIds& own) {
  const std::array<std::tuple<const char*, int64_t, int64_t>, 5> ids = {{{"pad", given.pad, own.pad},
                                                                         {"unk", given.unk, own.unk},
                                                                         {"cls", given.cls, own.cls},
                                                                         {"sep", given.sep, own.sep},
                                                                         {"mask", given.mask, own.mask}}};
  for (const auto& [name, a, b] : ids)
    if (a != b) return fmt::format("its {} id is {}, the encoder's {}", name, a, b);
  return std::nullopt;
}

// The first way `given` would feed the encoder other ids than `own` does.
std::optional<std::string> vocabulary_difference(const Tokenizer& given, const Tokenizer& own) {
  if (given.kind() != own.kind()) return fmt::format("it is {}, the encoder's is {}", given.kind(), own.kind());
  if (given.vocab_size() != own.vocab_size())
    return fmt::format("it has {} pieces, the encoder's {}", given.vocab_size(), own.vocab_size());
  if (auto special = special_id_difference(given.special_ids(), own.special_ids())) return special;
  for (int64_t id = 0; id < own.vocab_size(); ++id)
    if (given.id_to_piece(id) != own.id_to_piece(id))
      return fmt::format("its id {} is \"{}\", the encoder's \"{}\"", id, given.id_to_piece(id), own.id_to_piece(id));
  const auto* given_wordpiece = dynamic_cast<const WordPieceTokenizer*>(&given);
  const auto* own_wordpiece = dynamic_cast<const WordPieceTokenizer*>(&own);
  if (given_wordpiece && own_wordpiece && given_wordpiece->lower_case() != own_wordpiece->lower_case())
    return fmt::format("it {} lowercase, the encoder's tokenizer {}", given_wordpiece->lower_case() ? "does" : "does not",
                       own_wordpiece->lower_case() ? "does" : "does not");
  return std::nullopt;
}

std::unique_ptr<Tokenizer> named_tokenizer(const TokenizerConfig& t) {
  if (t.kind == TokenizerKind::wordpiece) return WordPieceTokenizer::from_vocab_file(t.vocab, t.lower_case);
  return std::make_unique<SentencePieceTokenizer>(t.model);
}

// Keys that size the checkpoint's tensors, or (num_attention_heads) split
// them into heads the checkpoint did not learn.
constexpr std::array<const char*, 8> kShapeKeys = {"vocab_size",        "hidden_size",
                                                   "num_hidden_layers", "num_attention_heads",
                                                   "intermediate_size", "max_position_embeddings",
                                                   "type_vocab_size",   "embedding_size"};

}  // namespace

void check_tokenizer_matches_pretrained(const ModelSection& model, const std::string& where) {
  const TokenizerConfig& t = model.tokenizer;
  if (model.pretrained.empty() || t.kind == TokenizerKind::automatic) return;
  check_model_folder(model.pretrained);
  const bool to_train = t.kind == TokenizerKind::sentencepiece && (t.model.empty() || !fs::exists(t.model));
  if (to_train)
    throw UserError(fmt::format("{}: model.tokenizer trains a new SentencePiece vocabulary, but the pretrained "
                                "encoder {} learned its embeddings for its own: {}",
                                where, model.pretrained, kUseOwnTokenizer));
  if (!has_tokenizer(model.pretrained)) return;  // nothing to compare with: the user's word is taken
  const auto own = load_tokenizer(model.pretrained);
  const auto given = named_tokenizer(t);
  if (const auto difference = vocabulary_difference(*given, *own))
    throw UserError(fmt::format("{}: model.tokenizer ({}) is not the tokenizer of the pretrained encoder {}: {}; {}",
                                where, t.kind == TokenizerKind::wordpiece ? t.vocab : t.model, model.pretrained,
                                *difference, kUseOwnTokenizer));
}

void check_config_keeps_pretrained_shape(const ModelSection& model, const std::string& where) {
  if (model.pretrained.empty() || !model.config.is_object()) return;
  check_model_folder(model.pretrained);
  const fs::path config_file = fs::path(model.pretrained) / "config.json";
  if (!fs::exists(config_file)) return;  // loading says what is missing
  // Through ModelConfig, so that a key the file leaves out reads as its default.
  const nlohmann::json own = model_config_to_json(read_model_config(config_file));
  for (const char* key : kShapeKeys) {
    const auto given = model.config.find(key);
    if (given == model.config.end()) continue;
    // Only embedding_size can be absent: 0, no projection.
    const nlohmann::json own_value = own.value(key, nlohmann::json(0));
    const bool same = given->is_number() && own_value.is_number() ? given->get<double>() == own_value.get<double>()
                                                                   : *given == own_value;
    if (!same)
      throw UserError(fmt::format("{}: model.config.{} is {}, but the pretrained encoder {} has {}: a pretrained "
                                  "encoder's shape is its checkpoint's; drop the key (model.config=null drops "
                                  "them all)",
                                  where, key, json_text(*given), model.pretrained, json_text(own_value)));
  }
}

}  // namespace mtbert
