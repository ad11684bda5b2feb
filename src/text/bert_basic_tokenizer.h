#pragma once
// BERT's "basic" tokenization, the step before WordPiece, with the exact
// semantics of HuggingFace's slow BertTokenizer (tokenization_bert.py and the
// lowercasing in PreTrainedTokenizer.tokenize):
//   1. with lower_case, every character is lowercased on its own (so Greek
//      final-sigma rules never apply: Σ always becomes σ);
//   2. U+0000, U+FFFD and characters of category C* are dropped, except \t \n
//      \r, which like category Zs become a space;
//   3. CJK ideographs become words of their own;
//   4. the text is NFC-normalised and split on Python's str.split()
//      whitespace (after step 2 that is the space, U+2028 and U+2029);
//   5. with lower_case, each word is NFD-decomposed and its Mn marks dropped;
//   6. each punctuation character (ASCII !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~ or
//      category P*) becomes a word of its own.
// Words equal to a `never_split` token after step 4 are kept as they are.
//
// Unicode data come from utf8proc. Invalid UTF-8 bytes are read as U+FFFD, as
// Python's errors="replace" decoding would, and therefore dropped.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mtbert {

// Words stored back to back in one buffer (one allocation for a whole text
// rather than one per word): word i is text[ends[i-1], ends[i]), ends[-1]
// being 0.
struct BasicTokens {
  std::string text;
  std::vector<uint32_t> ends;

  std::size_t size() const { return ends.size(); }
  std::string_view operator[](std::size_t i) const {
    const uint32_t begin = i == 0 ? 0 : ends[i - 1];
    return std::string_view(text).substr(begin, ends[i] - begin);
  }
  void clear() {
    text.clear();
    ends.clear();
  }
};

class BertBasicTokenizer {
 public:
  explicit BertBasicTokenizer(bool lower_case, std::vector<std::string> never_split = {});

  bool lower_case() const { return lower_case_; }

  // Appends the words of `text` to `out`.
  void split(std::string_view text, BasicTokens& out) const;

  std::vector<std::string> tokenize(std::string_view text) const;

 private:
  struct Scratch;

  void finish_word(BasicTokens& out, std::size_t start, bool ascii, Scratch& scratch) const;
  void split_ascii_punctuation(BasicTokens& out, std::size_t start) const;
  bool is_never_split(std::string_view word) const;

  bool lower_case_;
  std::vector<std::string> never_split_;
};

}  // namespace mtbert
