// load_tokenizer(): which tokenizer a model folder holds, and its settings.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "core/json_file.h"
#include "core/user_error.h"
#include "text/sentencepiece_tokenizer.h"
#include "text/tokenizer.h"
#include "text/wordpiece_tokenizer.h"

namespace mtbert {

namespace {

namespace fs = std::filesystem;

// `do_lower_case` from HuggingFace's tokenizer_config.json (default true).
// The settings that would change BERT's basic tokenization in ways this
// implementation does not follow are refused rather than silently ignored.
bool read_do_lower_case(const fs::path& config_file) {
  std::error_code ec;
  if (!fs::exists(config_file, ec)) return true;
  const nlohmann::json config = read_json_file(config_file);
  if (!config.is_object()) throw UserError(fmt::format("{} must hold a JSON object", config_file.string()));

  bool lower_case = true;
  if (const auto it = config.find("do_lower_case"); it != config.end()) {
    if (!it->is_boolean()) {
      throw UserError(fmt::format("{}: do_lower_case must be true or false, not {}", config_file.string(), json_text(*it)));
    }
    lower_case = it->get<bool>();
  }
  if (const auto it = config.find("strip_accents"); it != config.end() && !it->is_null()) {
    throw UserError(
        fmt::format("{}: strip_accents={} is not supported; only null (accents stripped exactly when lowercasing)",
                    config_file.string(), json_text(*it)));
  }
  if (const auto it = config.find("tokenize_chinese_chars"); it != config.end() && *it != true) {
    throw UserError(
        fmt::format("{}: tokenize_chinese_chars={} is not supported; only true", config_file.string(), json_text(*it)));
  }
  return lower_case;
}

}  // namespace

bool has_tokenizer(const fs::path& model_dir) {
  std::error_code ec;
  return fs::exists(model_dir / "vocab.txt", ec) || fs::exists(model_dir / "spm.model", ec);
}

void check_tokenizer_fits(const Tokenizer& tokenizer, int64_t model_vocab_size, const std::string& where) {
  if (tokenizer.vocab_size() > model_vocab_size)
    throw UserError(fmt::format("{}: the tokenizer has {} pieces but the model's vocab_size is {} (ids past the "
                                "embedding table would be out of range)",
                                where, tokenizer.vocab_size(), model_vocab_size));
}

std::unique_ptr<Tokenizer> load_tokenizer(const fs::path& model_dir) {
  std::error_code ec;
  if (!fs::is_directory(model_dir, ec)) {
    throw UserError(fmt::format("model folder {} does not exist", model_dir.string()));
  }
  const fs::path vocab = model_dir / "vocab.txt";
  if (fs::exists(vocab, ec)) {
    return WordPieceTokenizer::from_vocab_file(vocab, read_do_lower_case(model_dir / "tokenizer_config.json"));
  }
  const fs::path spm = model_dir / "spm.model";
  if (fs::exists(spm, ec)) return std::make_unique<SentencePieceTokenizer>(spm);
  throw UserError(
      fmt::format("model folder {} has no tokenizer: expected vocab.txt (WordPiece) or spm.model "
                  "(SentencePiece)",
                  model_dir.string()));
}

}  // namespace mtbert
