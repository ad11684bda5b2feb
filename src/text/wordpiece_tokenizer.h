#pragma once
// BERT's WordPiece tokenizer, token for token the same as HuggingFace's slow
// BertTokenizer: special tokens written in the text stay whole, the rest goes
// through BertBasicTokenizer, then each word is split greedily into the
// longest vocabulary pieces from its start ("##" marks a continuation). A word
// longer than 100 code points, or one the vocabulary cannot cover, becomes
// [UNK].
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/bert_basic_tokenizer.h"
#include "text/special_token_splitter.h"
#include "text/tokenizer.h"

namespace mtbert {

class WordPieceTokenizer final : public Tokenizer {
 public:
  // HuggingFace's limit: longer words become [UNK] without being looked at.
  static constexpr std::size_t kMaxWordCodePoints = 100;

  // `vocab[i]` is the piece of id i. [PAD], [UNK], [CLS], [SEP] and [MASK]
  // must all be in it (UserError otherwise).
  WordPieceTokenizer(std::vector<std::string> vocab, bool lower_case);

  // Reads a `vocab.txt`: one piece a line, id = line number - 1; \n, \r\n and
  // \r all end a line, as Python's universal newlines do. UserError naming the
  // file when it is missing, unreadable, not UTF-8 or lacks a special token.
  static std::unique_ptr<WordPieceTokenizer> from_vocab_file(const std::filesystem::path& path, bool lower_case);

  // The hash maps view the strings of `pieces_`: copying would leave them
  // dangling.
  WordPieceTokenizer(const WordPieceTokenizer&) = delete;
  WordPieceTokenizer& operator=(const WordPieceTokenizer&) = delete;

  std::vector<std::string> tokenize(std::string_view text) const override;
  std::vector<int64_t> encode(std::string_view text) const override;

  // Throws UserError for an id outside [0, vocab_size()).
  std::string id_to_piece(int64_t id) const override;
  int64_t piece_to_id(std::string_view piece) const override;
  int64_t vocab_size() const override { return static_cast<int64_t>(pieces_.size()); }
  const SpecialTokenIds& special_ids() const override { return special_; }
  std::string kind() const override { return "wordpiece"; }

  bool lower_case() const { return basic_.lower_case(); }

 private:
  // Appends the ids of one basic-tokenizer word to `ids`.
  void append_word_ids(std::string_view word, std::vector<int64_t>& ids) const;

  std::vector<std::string> pieces_;
  // Every piece, for the start of a word; and the "##" pieces keyed without
  // their "##", for the rest: lookups take slices of the word, no copies.
  std::unordered_map<std::string_view, int64_t> word_start_ids_;
  std::unordered_map<std::string_view, int64_t> continuation_ids_;
  // Longer slices cannot be in the vocabulary and are not looked up.
  std::size_t max_word_start_bytes_ = 0;
  std::size_t max_continuation_bytes_ = 0;
  SpecialTokenIds special_;
  SpecialTokenSplitter special_splitter_;
  BertBasicTokenizer basic_;
};

}  // namespace mtbert
