#pragma once
// Turns one text or a text pair into model inputs, exactly like HuggingFace's
// `tokenizer(text, text_pair, truncation=True, max_length=N)`:
//   single: [CLS] a [SEP]             token types 0...0
//   pair:   [CLS] a [SEP] b [SEP]     token types 0...0 1...1
// Truncation is HuggingFace's "longest_first": one token at a time from the
// end of the longer sequence (the second one on a tie) until it fits.
#include <cstdint>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace mtbert {

struct Encoding {
  std::vector<int64_t> ids;
  std::vector<int64_t> token_type_ids;
  std::vector<int64_t> attention_mask;
};

// max_length counts the special tokens; 0 means no truncation.
Encoding encode_single(const Tokenizer& tok, std::string_view text, int64_t max_length);
Encoding encode_pair(const Tokenizer& tok, std::string_view a, std::string_view b, int64_t max_length);

// Same, from ids that are already tokenized (no special tokens).
Encoding encode_ids(const SpecialTokenIds& special, std::vector<int64_t> a, int64_t max_length);
Encoding encode_id_pair(const SpecialTokenIds& special, std::vector<int64_t> a, std::vector<int64_t> b,
                        int64_t max_length);

// A padded batch in row-major order: `ids[b * length + t]`.
struct PaddedBatch {
  int64_t batch = 0;
  int64_t length = 0;
  std::vector<int64_t> ids;
  std::vector<int64_t> token_type_ids;
  std::vector<int64_t> attention_mask;
};

// Pads every encoding to the longest one (at least `min_length`) with
// `pad_id`, token type 0 and mask 0.
PaddedBatch pad_batch(const std::vector<Encoding>& encodings, int64_t pad_id, int64_t min_length = 0);

}  // namespace mtbert
