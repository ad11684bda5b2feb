#include "text/special_token_splitter.h"

#include <algorithm>

namespace mtbert {

SpecialTokenSplitter::SpecialTokenSplitter(std::vector<Token> tokens) {
  for (auto& token : tokens) {
    if (token.text.empty()) continue;
    first_byte_[static_cast<unsigned char>(token.text[0])] = true;
    tokens_.push_back(std::move(token));
  }
  std::stable_sort(tokens_.begin(), tokens_.end(),
                   [](const Token& a, const Token& b) { return a.text.size() > b.text.size(); });
}

const SpecialTokenSplitter::Token* SpecialTokenSplitter::match_at(std::string_view text, std::size_t pos) const {
  const std::string_view rest = text.substr(pos);
  for (const Token& token : tokens_) {
    if (rest.substr(0, token.text.size()) == token.text) return &token;
  }
  return nullptr;
}

}  // namespace mtbert
