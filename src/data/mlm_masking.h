#pragma once
// BERT's dynamic masking, drawn anew each time a batch is made, from the
// generator given (the pretrainer seeds one per batch, so a resumed run masks
// exactly as an uninterrupted one, whatever the number of ranks):
//
//   each candidate token (not [CLS], [SEP], padding or another special id) is
//   chosen with probability mask_prob; of the chosen, mask_token_fraction
//   become [MASK], random_token_fraction a token drawn uniformly from the
//   vocabulary, the rest stay as they are; the loss is taken at the chosen
//   positions only.
//   whole_word: the choice is made per word (a token and the continuation
//   pieces after it: WordPiece "##x", SentencePiece pieces without the "▁"
//   word start), and all of a word's tokens are chosen together.
//
// A batch in which no token was chosen gets one chosen at random, so that the
// loss is always defined.
#include <cstdint>
#include <vector>

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include "core/token_batch.h"
#include "text/tokenizer.h"

namespace mtbert {

struct MaskingOptions {
  double mask_prob = 0.15;
  double mask_token_fraction = 0.8;
  double random_token_fraction = 0.1;
  bool whole_word = false;
};

// What a tokenizer's vocabulary says about its ids: which are special (never
// chosen) and which continue the word before them.
struct VocabularyTraits {
  std::vector<bool> special;
  std::vector<bool> continues_word;
  SpecialTokenIds ids;
  int64_t size = 0;
};
VocabularyTraits vocabulary_traits(const Tokenizer& tokenizer);

struct MaskedBatch {
  TokenBatch inputs;        // [CLS] ids [SEP], padded (inputs.padded: some row is shorter); chosen tokens replaced
  torch::Tensor positions;  // [M] int64: flat indices into [B, N] of the chosen tokens
  torch::Tensor labels;     // [M] int64: their original ids
};

// segments: each a list of ids without [CLS]/[SEP]. Draws from `generator`,
// or from LibTorch's default one when none is given.
MaskedBatch mask_segments(const std::vector<std::vector<int64_t>>& segments, const VocabularyTraits& vocabulary,
                          const MaskingOptions& options, c10::optional<at::Generator> generator = c10::nullopt);

// Rows [begin, end) of a masked batch, padded to their own longest row, with
// the chosen positions among them: a data-parallel rank's share of a batch
// masked whole, so that the masks do not depend on how many ranks share it.
// It may have no chosen position at all.
MaskedBatch masked_rows(const MaskedBatch& batch, int64_t begin, int64_t end);

}  // namespace mtbert
