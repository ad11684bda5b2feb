#include "text/sentencepiece_tokenizer.h"

#include <fmt/format.h>

#include "core/user_error.h"

namespace mtbert {

namespace {

constexpr std::string_view kMaskPiece = "[MASK]";

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer(const std::filesystem::path& model_file)
    : model_file_(model_file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(model_file, ec)) {
    throw UserError(fmt::format("SentencePiece model {} does not exist", model_file.string()));
  }
  std::string error;
  processor_ = sentencepiece_api().load(model_file.string(), &error);
  if (!processor_) {
    throw UserError(
        fmt::format("cannot load SentencePiece model {}: it is not a valid model file", model_file.string()));
  }
  model_pieces_ = processor_->piece_size();

  auto resolve = [&](std::string_view piece, int model_id, const char* model_field) -> int64_t {
    const int64_t by_name = model_piece_id(piece);
    if (by_name >= 0) return by_name;
    if (model_id >= 0) return model_id;
    throw UserError(
        fmt::format("SentencePiece model {} has neither a {} piece nor a {}; BERT-style encoding needs one "
                    "(train with train_sentencepiece, which reserves [PAD] [UNK] [CLS] [SEP] [MASK] at ids 0..4)",
                    model_file.string(), piece, model_field));
  };
  special_.pad = resolve("[PAD]", processor_->pad_id(), "pad_id");
  special_.unk = resolve("[UNK]", processor_->unk_id(), "unk_id");
  special_.cls = resolve("[CLS]", processor_->bos_id(), "bos_id");
  special_.sep = resolve("[SEP]", processor_->eos_id(), "eos_id");
  special_.mask = model_piece_id(kMaskPiece);
  if (special_.mask < 0) {
    special_.mask = model_pieces_;
    mask_appended_ = true;
  }

  std::vector<SpecialTokenSplitter::Token> tokens;
  for (const int64_t id : {special_.pad, special_.unk, special_.cls, special_.sep, special_.mask}) {
    tokens.push_back({id_to_piece(id), id});
  }
  special_splitter_ = SpecialTokenSplitter(std::move(tokens));
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

int64_t SentencePieceTokenizer::model_piece_id(std::string_view piece) const {
  const int id = processor_->piece_to_id(piece);
  return id >= 0 && processor_->id_to_piece(id) == piece ? id : -1;
}

std::vector<int64_t> SentencePieceTokenizer::encode(std::string_view text) const {
  std::vector<int64_t> ids;
  std::vector<int> segment_ids;
  special_splitter_.for_each_segment(text, [&](std::string_view segment, int64_t special_id) {
    if (special_id >= 0) {
      ids.push_back(special_id);
      return;
    }
    std::string error;
    if (!processor_->encode(segment, &segment_ids, &error)) {
      throw UserError(fmt::format("SentencePiece ({}) failed to encode text: {}", model_file_.string(), error));
    }
    ids.insert(ids.end(), segment_ids.begin(), segment_ids.end());
  });
  return ids;
}

std::vector<std::string> SentencePieceTokenizer::tokenize(std::string_view text) const {
  const std::vector<int64_t> ids = encode(text);
  std::vector<std::string> pieces;
  pieces.reserve(ids.size());
  for (const int64_t id : ids) pieces.push_back(id_to_piece(id));
  return pieces;
}

std::string SentencePieceTokenizer::id_to_piece(int64_t id) const {
  if (mask_appended_ && id == special_.mask) return std::string(kMaskPiece);
  if (id < 0 || id >= model_pieces_) {
    throw UserError(fmt::format("token id {} is outside the SentencePiece vocabulary of {} (size {}): do the model "
                                "and the tokenizer belong together?", id, model_file_.string(), vocab_size()));
  }
  return processor_->id_to_piece(static_cast<int>(id));
}

int64_t SentencePieceTokenizer::piece_to_id(std::string_view piece) const {
  if (mask_appended_ && piece == kMaskPiece) return special_.mask;
  return model_piece_id(piece);
}

int64_t SentencePieceTokenizer::vocab_size() const { return model_pieces_ + (mask_appended_ ? 1 : 0); }

}  // namespace mtbert
