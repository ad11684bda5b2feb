#pragma once
// The Tokenizer interface over a SentencePiece model (libsentencepiece): the
// `spm.model` of DeBERTa-v3, or one trained by train_sentencepiece() for a
// model trained from random initialization.
//
// Special ids are resolved so that sequence_encoder's [CLS] a [SEP] layout
// works with any model:
//   [PAD], [UNK], [CLS], [SEP]: the piece of that name when the model has it,
//     else the model's own pad / unk / bos / eos id; a model with neither is a
//     UserError (sequence encoding needs all four);
//   [MASK]: the piece "[MASK]" when the model has it, else a new id appended
//     right after the model's pieces (id = the model's piece count), which is
//     what DeBERTa-v3 does: its spm.model has [PAD]=0, [CLS]=1, [SEP]=2,
//     [UNK]=3 and 128000 pieces, and HuggingFace adds [MASK] as id 128000.
//     vocab_size() then counts that extra id.
// The pieces of these five ids ("[CLS]", or "<s>" for a model that names its
// bos so) are kept whole, with their ids, where the text spells them, as
// HuggingFace does; the text between them goes through SentencePiece.
// tokenize() names the piece of each id of encode(): a run of characters the
// model does not know shows as the unknown piece ([UNK]), where SentencePiece's
// own piece output would repeat the characters.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/sentencepiece_engine.h"
#include "text/special_token_splitter.h"
#include "text/tokenizer.h"

namespace mtbert {

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // UserError naming the file when it is missing or not a SentencePiece model.
  explicit SentencePieceTokenizer(const std::filesystem::path& model_file);
  ~SentencePieceTokenizer() override;

  std::vector<std::string> tokenize(std::string_view text) const override;
  std::vector<int64_t> encode(std::string_view text) const override;

  // Throws UserError for an id outside [0, vocab_size()).
  std::string id_to_piece(int64_t id) const override;
  int64_t piece_to_id(std::string_view piece) const override;
  int64_t vocab_size() const override;
  const SpecialTokenIds& special_ids() const override { return special_; }
  std::string kind() const override { return "sentencepiece"; }

 private:
  // The model's id of `piece`, or -1 (SentencePiece itself answers unk_id).
  int64_t model_piece_id(std::string_view piece) const;

  std::filesystem::path model_file_;
  std::unique_ptr<SentencePieceEngine> processor_;
  int64_t model_pieces_ = 0;
  bool mask_appended_ = false;
  SpecialTokenIds special_;
  SpecialTokenSplitter special_splitter_;
};

}  // namespace mtbert
