#include "text/wordpiece_tokenizer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "core/input_file.h"
#include "core/limits.h"
#include "core/user_error.h"
#include "core/utf8_check.h"

namespace mtbert {

namespace {

constexpr std::string_view kContinuationPrefix = "##";
const std::vector<std::string> kSpecialTokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};

bool is_utf8_continuation(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

std::size_t count_code_points(std::string_view word) {
  return static_cast<std::size_t>(
      std::count_if(word.begin(), word.end(), [](char byte) { return !is_utf8_continuation(byte); }));
}

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> vocab, bool lower_case)
    : pieces_(std::move(vocab)), basic_(lower_case, kSpecialTokens) {
  // pieces_ no longer changes: the maps may view its strings. A duplicated
  // piece keeps its last id, as HuggingFace's dict does.
  word_start_ids_.reserve(pieces_.size());
  for (std::size_t id = 0; id < pieces_.size(); ++id) {
    const std::string_view piece = pieces_[id];
    word_start_ids_[piece] = static_cast<int64_t>(id);
    max_word_start_bytes_ = std::max(max_word_start_bytes_, piece.size());
    if (piece.substr(0, kContinuationPrefix.size()) == kContinuationPrefix) {
      const std::string_view rest = piece.substr(kContinuationPrefix.size());
      continuation_ids_[rest] = static_cast<int64_t>(id);
      max_continuation_bytes_ = std::max(max_continuation_bytes_, rest.size());
    }
  }

  std::vector<std::string> missing;
  std::vector<SpecialTokenSplitter::Token> splitter_tokens;
  for (const std::string& token : kSpecialTokens) {
    const int64_t id = piece_to_id(token);
    if (id < 0) missing.push_back(token);
    splitter_tokens.push_back({token, id});
  }
  if (!missing.empty()) {
    throw UserError(fmt::format("the WordPiece vocabulary lacks the special token(s) {}", fmt::join(missing, ", ")));
  }
  special_.pad = piece_to_id("[PAD]");
  special_.unk = piece_to_id("[UNK]");
  special_.cls = piece_to_id("[CLS]");
  special_.sep = piece_to_id("[SEP]");
  special_.mask = piece_to_id("[MASK]");
  special_splitter_ = SpecialTokenSplitter(std::move(splitter_tokens));
}

std::unique_ptr<WordPieceTokenizer> WordPieceTokenizer::from_vocab_file(const std::filesystem::path& path,
                                                                        bool lower_case) {
  const std::string contents = read_input_file(path, limits::kTokenizerFileBytes, "WordPiece vocabulary");

  std::vector<std::string> vocab;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i <= contents.size(); ++i) {
    const bool at_end = i == contents.size();
    if (!at_end && contents[i] != '\n' && contents[i] != '\r') continue;
    if (at_end && line_start == contents.size()) break;  // no empty last line after a final newline
    const std::string_view line = std::string_view(contents).substr(line_start, i - line_start);
    check_utf8_line(line, path.string(), static_cast<int64_t>(vocab.size()) + 1);
    vocab.emplace_back(line);
    if (!at_end && contents[i] == '\r' && i + 1 < contents.size() && contents[i + 1] == '\n') ++i;
    line_start = i + 1;
  }
  try {
    return std::make_unique<WordPieceTokenizer>(std::move(vocab), lower_case);
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", path.string(), e.what()));
  }
}

void WordPieceTokenizer::append_word_ids(std::string_view word, std::vector<int64_t>& ids) const {
  if (count_code_points(word) > kMaxWordCodePoints) {
    ids.push_back(special_.unk);
    return;
  }
  const std::size_t word_ids_start = ids.size();
  std::size_t start = 0;
  while (start < word.size()) {
    const bool at_word_start = start == 0;
    const auto& ids_by_piece = at_word_start ? word_start_ids_ : continuation_ids_;
    const std::size_t max_bytes = at_word_start ? max_word_start_bytes_ : max_continuation_bytes_;
    // The longest candidate that could be in the vocabulary, on a code point
    // boundary; then ever shorter ones.
    std::size_t end = word.size();
    if (end - start > max_bytes) {
      end = start + max_bytes;
      while (end > start && is_utf8_continuation(word[end])) --end;
    }
    int64_t found = -1;
    while (end > start) {
      const auto it = ids_by_piece.find(word.substr(start, end - start));
      if (it != ids_by_piece.end()) {
        found = it->second;
        break;
      }
      do --end;
      while (end > start && is_utf8_continuation(word[end]));
    }
    if (found < 0) {
      ids.resize(word_ids_start);
      ids.push_back(special_.unk);
      return;
    }
    ids.push_back(found);
    start = end;
  }
}

std::vector<int64_t> WordPieceTokenizer::encode(std::string_view text) const {
  std::vector<int64_t> ids;
  BasicTokens words;
  special_splitter_.for_each_segment(text, [&](std::string_view segment, int64_t special_id) {
    if (special_id >= 0) {
      ids.push_back(special_id);
      return;
    }
    words.clear();
    basic_.split(segment, words);
    for (std::size_t i = 0; i < words.size(); ++i) append_word_ids(words[i], ids);
  });
  return ids;
}

std::vector<std::string> WordPieceTokenizer::tokenize(std::string_view text) const {
  // Every piece, [UNK] included, is the vocabulary entry of its id.
  const std::vector<int64_t> ids = encode(text);
  std::vector<std::string> pieces;
  pieces.reserve(ids.size());
  for (const int64_t id : ids) pieces.push_back(pieces_[static_cast<std::size_t>(id)]);
  return pieces;
}

std::string WordPieceTokenizer::id_to_piece(int64_t id) const {
  if (id < 0 || id >= vocab_size()) {
    throw UserError(fmt::format("token id {} is outside the WordPiece vocabulary (size {}): do the model and the "
                                "tokenizer belong together?",
                                id, vocab_size()));
  }
  return pieces_[static_cast<std::size_t>(id)];
}

int64_t WordPieceTokenizer::piece_to_id(std::string_view piece) const {
  const auto it = word_start_ids_.find(piece);
  return it == word_start_ids_.end() ? -1 : it->second;
}

}  // namespace mtbert
