#include "data/mlm_masking.h"

#include <algorithm>

#include <torch/torch.h>

namespace mtbert {

VocabularyTraits vocabulary_traits(const Tokenizer& tokenizer) {
  VocabularyTraits v;
  v.size = tokenizer.vocab_size();
  v.ids = tokenizer.special_ids();
  v.special.assign(static_cast<size_t>(v.size), false);
  v.continues_word.assign(static_cast<size_t>(v.size), false);
  const bool wordpiece = tokenizer.kind() == "wordpiece";
  for (int64_t id = 0; id < v.size; ++id) {
    const std::string piece = tokenizer.id_to_piece(id);
    // Bracketed pieces ([CLS], [unused0], <pad>...) are control symbols.
    const bool bracketed = piece.size() > 2 && ((piece.front() == '[' && piece.back() == ']') ||
                                                (piece.front() == '<' && piece.back() == '>'));
    v.special[static_cast<size_t>(id)] = bracketed;
    v.continues_word[static_cast<size_t>(id)] =
        wordpiece ? piece.rfind("##", 0) == 0 : !bracketed && piece.rfind("\xE2\x96\x81", 0) != 0;
  }
  for (const int64_t id : {v.ids.pad, v.ids.cls, v.ids.sep, v.ids.mask, v.ids.unk})
    if (id >= 0 && id < v.size) v.special[static_cast<size_t>(id)] = true;
  return v;
}

MaskedBatch mask_segments(const std::vector<std::vector<int64_t>>& segments, const VocabularyTraits& vocabulary,
                          const MaskingOptions& options, c10::optional<at::Generator> generator) {
  const int64_t batch = static_cast<int64_t>(segments.size());
  int64_t length = 0;
  for (const auto& s : segments) length = std::max<int64_t>(length, static_cast<int64_t>(s.size()) + 2);

  auto ids = torch::full({batch, length}, vocabulary.ids.pad, torch::kLong);
  auto attention = torch::zeros({batch, length}, torch::kLong);
  auto* id = ids.data_ptr<int64_t>();
  auto* att = attention.data_ptr<int64_t>();
  bool padded = false;
  for (int64_t b = 0; b < batch; ++b) {
    const auto& s = segments[static_cast<size_t>(b)];
    padded = padded || static_cast<int64_t>(s.size()) + 2 < length;
    int64_t* row = id + b * length;
    row[0] = vocabulary.ids.cls;
    std::copy(s.begin(), s.end(), row + 1);
    row[s.size() + 1] = vocabulary.ids.sep;
    std::fill(att + b * length, att + b * length + static_cast<int64_t>(s.size()) + 2, 1);
  }

  // One uniform draw per token decides the choice (per word: the word's
  // first token's draw), a second one what the chosen token becomes.
  auto choose = torch::rand({batch, length}, generator, torch::kDouble);
  auto fate = torch::rand({batch, length}, generator, torch::kDouble);
  auto random_ids = torch::randint(vocabulary.size, {batch, length}, generator, torch::kLong);
  const auto* u = choose.data_ptr<double>();
  std::vector<int64_t> positions;
  for (int64_t b = 0; b < batch; ++b) {
    bool word_chosen = false;
    for (int64_t i = 0; i < length; ++i) {
      const int64_t k = b * length + i;
      const int64_t token = id[k];
      if (att[k] == 0 || vocabulary.special[static_cast<size_t>(token)]) {
        word_chosen = false;
        continue;
      }
      const bool continuation = options.whole_word && vocabulary.continues_word[static_cast<size_t>(token)];
      if (!continuation) word_chosen = u[k] < options.mask_prob;
      if (word_chosen) positions.push_back(k);
    }
  }
  if (positions.empty()) {  // guarantee a defined loss
    std::vector<int64_t> candidates;
    for (int64_t k = 0; k < batch * length; ++k)
      if (att[k] != 0 && !vocabulary.special[static_cast<size_t>(id[k])]) candidates.push_back(k);
    if (!candidates.empty())
      positions.push_back(candidates[static_cast<size_t>(
          torch::randint(static_cast<int64_t>(candidates.size()), {1}, generator, torch::kLong).item<int64_t>())]);
  }

  MaskedBatch out;
  out.positions = torch::tensor(positions, torch::kLong);
  out.labels = ids.view(-1).index_select(0, out.positions).clone();
  const auto* f = fate.data_ptr<double>();
  const auto* r = random_ids.data_ptr<int64_t>();
  for (const int64_t k : positions) {
    if (f[k] < options.mask_token_fraction) id[k] = vocabulary.ids.mask;
    else if (f[k] < options.mask_token_fraction + options.random_token_fraction) id[k] = r[k];
  }
  out.inputs.input_ids = ids;
  out.inputs.attention_mask = attention;
  out.inputs.token_type_ids = torch::zeros_like(ids);
  out.inputs.padded = padded;
  return out;
}

MaskedBatch masked_rows(const MaskedBatch& batch, int64_t begin, int64_t end) {
  const int64_t length = batch.inputs.input_ids.size(1);
  const auto attention = batch.inputs.attention_mask.slice(0, begin, end);
  // Every row is [CLS] ... [SEP] then padding: the longest row's length is the
  // largest count of attended tokens.
  const int64_t kept = end > begin ? attention.sum(1).max().item<int64_t>() : 0;
  MaskedBatch out;
  out.inputs.input_ids = batch.inputs.input_ids.slice(0, begin, end).slice(1, 0, kept).contiguous();
  out.inputs.attention_mask = attention.slice(1, 0, kept).contiguous();
  out.inputs.token_type_ids = batch.inputs.token_type_ids.slice(0, begin, end).slice(1, 0, kept).contiguous();
  out.inputs.padded = end > begin && attention.sum(1).min().item<int64_t>() < kept;
  const auto row = batch.positions.div(length, "floor");
  const auto mine = row.ge(begin).logical_and(row.lt(end));
  const auto column = batch.positions.remainder(length).masked_select(mine);
  out.positions = (row.masked_select(mine) - begin) * kept + column;
  out.labels = batch.labels.masked_select(mine);
  return out;
}

}  // namespace mtbert
