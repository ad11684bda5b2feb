#pragma once
// Special tokens written literally in a text ("[CLS] hello [SEP]") stay whole
// and keep their own id, as in HuggingFace's tokenizers, which split the text
// on them before tokenizing the pieces in between (and lowercase only those
// pieces). Matching is exact and case-sensitive: "[cls]" is ordinary text.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mtbert {

class SpecialTokenSplitter {
 public:
  struct Token {
    std::string text;
    int64_t id = -1;
  };

  SpecialTokenSplitter() = default;
  // Empty token texts are ignored.
  explicit SpecialTokenSplitter(std::vector<Token> tokens);

  // Calls `f(segment, id)` for the pieces of `text` in order: `id` is the
  // special token's id, or -1 for a (never empty) run of ordinary text.
  // Matches are found left to right; of tokens starting at the same byte the
  // longest wins.
  template <class F>
  void for_each_segment(std::string_view text, F&& f) const {
    std::size_t plain_start = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (!first_byte_[static_cast<unsigned char>(text[i])]) continue;
      const Token* token = match_at(text, i);
      if (token == nullptr) continue;
      if (i > plain_start) f(text.substr(plain_start, i - plain_start), int64_t{-1});
      f(text.substr(i, token->text.size()), token->id);
      i += token->text.size() - 1;
      plain_start = i + 1;
    }
    if (plain_start < text.size()) f(text.substr(plain_start), int64_t{-1});
  }

  const std::vector<Token>& tokens() const { return tokens_; }

 private:
  const Token* match_at(std::string_view text, std::size_t pos) const;

  std::vector<Token> tokens_;  // longest first
  std::array<bool, 256> first_byte_{};
};

}  // namespace mtbert
