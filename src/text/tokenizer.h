#pragma once
// The tokenizer interface shared by WordPiece (BERT) and SentencePiece
// (DeBERTa, models trained from scratch). A tokenizer turns text into ids
// without special tokens; sequence_encoder.h adds [CLS]/[SEP], token types,
// truncation and padding the same way for every tokenizer.
//
// Deliberately free of LibTorch: tokenization is pure text processing and this
// header is included widely.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mtbert {

struct SpecialTokenIds {
  int64_t pad = 0;
  int64_t unk = 0;
  int64_t cls = 0;
  int64_t sep = 0;
  int64_t mask = 0;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // `text` is UTF-8. Invalid bytes do not throw: they read as U+FFFD, which
  // WordPiece drops (as BERT's cleaning does) and SentencePiece maps to its
  // unknown piece; inputs are validated where they enter (core/utf8_check.h).
  // Special tokens spelled in the text ("[SEP]") keep their ids.
  //
  // The pieces of `text` (e.g. "hello", "##ing"), no special tokens added.
  virtual std::vector<std::string> tokenize(std::string_view text) const = 0;
  // The ids of those pieces.
  virtual std::vector<int64_t> encode(std::string_view text) const = 0;

  virtual std::string id_to_piece(int64_t id) const = 0;
  // -1 when the piece is not in the vocabulary.
  virtual int64_t piece_to_id(std::string_view piece) const = 0;
  virtual int64_t vocab_size() const = 0;
  virtual const SpecialTokenIds& special_ids() const = 0;
  // "wordpiece" or "sentencepiece".
  virtual std::string kind() const = 0;
};

// Loads the tokenizer of a model folder: `vocab.txt` (WordPiece, with
// `do_lower_case` from `tokenizer_config.json`, default true) or `spm.model`
// (SentencePiece). Throws UserError naming the folder when neither is there.
std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& model_dir);

// Whether a model folder holds vocab.txt or spm.model (an encoder-only folder
// may have neither).
bool has_tokenizer(const std::filesystem::path& model_dir);

// UserError naming `where` when the tokenizer has more pieces than the
// model's embedding table has rows.
void check_tokenizer_fits(const Tokenizer& tokenizer, int64_t model_vocab_size, const std::string& where);

}  // namespace mtbert
