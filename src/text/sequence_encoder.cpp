#include "text/sequence_encoder.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/user_error.h"

namespace mtbert {

namespace {

// HuggingFace only logs an error when max_length cannot even hold the special
// tokens, and returns a longer sequence; a model would then index past its
// position table, so this is the user's mistake to fix.
void check_max_length(int64_t max_length, int64_t special_tokens, const char* what) {
  if (max_length < 0) {
    throw UserError(fmt::format("max_length must be 0 (no truncation) or positive, not {}", max_length));
  }
  if (max_length > 0 && max_length < special_tokens) {
    throw UserError(fmt::format("max_length {} cannot hold a {}: its special tokens alone take {} positions",
                                max_length, what, special_tokens));
  }
}

}  // namespace

Encoding encode_ids(const SpecialTokenIds& special, std::vector<int64_t> a, int64_t max_length) {
  check_max_length(max_length, 2, "sequence ([CLS] a [SEP])");
  if (max_length > 0 && static_cast<int64_t>(a.size()) + 2 > max_length) {
    a.resize(static_cast<std::size_t>(max_length - 2));
  }
  Encoding e;
  e.ids.reserve(a.size() + 2);
  e.ids.push_back(special.cls);
  e.ids.insert(e.ids.end(), a.begin(), a.end());
  e.ids.push_back(special.sep);
  e.token_type_ids.assign(e.ids.size(), 0);
  e.attention_mask.assign(e.ids.size(), 1);
  return e;
}

Encoding encode_id_pair(const SpecialTokenIds& special, std::vector<int64_t> a, std::vector<int64_t> b,
                        int64_t max_length) {
  check_max_length(max_length, 3, "pair ([CLS] a [SEP] b [SEP])");
  if (max_length > 0) {
    // "longest_first": one token at a time from the end of the longer
    // sequence, the second one on a tie.
    int64_t excess = static_cast<int64_t>(a.size() + b.size()) + 3 - max_length;
    for (; excess > 0; --excess) {
      if (a.size() > b.size()) {
        a.pop_back();
      } else {
        b.pop_back();
      }
    }
  }
  Encoding e;
  e.ids.reserve(a.size() + b.size() + 3);
  e.ids.push_back(special.cls);
  e.ids.insert(e.ids.end(), a.begin(), a.end());
  e.ids.push_back(special.sep);
  const std::size_t first_length = e.ids.size();
  e.ids.insert(e.ids.end(), b.begin(), b.end());
  e.ids.push_back(special.sep);
  e.token_type_ids.assign(e.ids.size(), 1);
  std::fill_n(e.token_type_ids.begin(), first_length, 0);
  e.attention_mask.assign(e.ids.size(), 1);
  return e;
}

Encoding encode_single(const Tokenizer& tok, std::string_view text, int64_t max_length) {
  return encode_ids(tok.special_ids(), tok.encode(text), max_length);
}

Encoding encode_pair(const Tokenizer& tok, std::string_view a, std::string_view b, int64_t max_length) {
  return encode_id_pair(tok.special_ids(), tok.encode(a), tok.encode(b), max_length);
}

PaddedBatch pad_batch(const std::vector<Encoding>& encodings, int64_t pad_id, int64_t min_length) {
  PaddedBatch batch;
  batch.batch = static_cast<int64_t>(encodings.size());
  batch.length = std::max<int64_t>(min_length, 0);
  for (const Encoding& e : encodings) batch.length = std::max(batch.length, static_cast<int64_t>(e.ids.size()));
  const auto cells = static_cast<std::size_t>(batch.batch * batch.length);
  batch.ids.assign(cells, pad_id);
  batch.token_type_ids.assign(cells, 0);
  batch.attention_mask.assign(cells, 0);
  for (std::size_t row = 0; row < encodings.size(); ++row) {
    const Encoding& e = encodings[row];
    const auto offset = static_cast<std::ptrdiff_t>(row * static_cast<std::size_t>(batch.length));
    std::copy(e.ids.begin(), e.ids.end(), batch.ids.begin() + offset);
    std::copy(e.token_type_ids.begin(), e.token_type_ids.end(), batch.token_type_ids.begin() + offset);
    std::copy(e.attention_mask.begin(), e.attention_mask.end(), batch.attention_mask.begin() + offset);
  }
  return batch;
}

}  // namespace mtbert
