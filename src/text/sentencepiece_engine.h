#pragma once
// libsentencepiece behind a narrow interface, loaded from a plugin.
//
// Why a plugin: Debian's libsentencepiece exports its own bundled copy of
// protobuf-lite, while LibTorch links the system libprotobuf. Linked into one
// program, the first copy's symbols interpose the second's and the program
// crashes in protobuf's static initializers before main(). So every call into
// SentencePiece lives in libmtbert_sentencepiece.so, which is loaded on first
// use with RTLD_LOCAL | RTLD_DEEPBIND: its protobuf stays its own, and nothing
// here includes a SentencePiece header. Only virtual calls and standard-library
// types cross the boundary.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mtbert {

// One loaded SentencePiece model: SentencePieceProcessor's queries.
class SentencePieceEngine {
 public:
  virtual ~SentencePieceEngine() = default;
  virtual int piece_size() const = 0;
  // SentencePiece's answer: unk_id() for a piece it does not have.
  virtual int piece_to_id(std::string_view piece) const = 0;
  virtual std::string id_to_piece(int id) const = 0;
  virtual bool is_control(int id) const = 0;
  virtual int pad_id() const = 0;
  virtual int unk_id() const = 0;
  virtual int bos_id() const = 0;
  virtual int eos_id() const = 0;
  // false, with SentencePiece's message in *error, when it fails.
  virtual bool encode(std::string_view text, std::vector<int>* ids, std::string* error) const = 0;
  virtual bool encode_pieces(std::string_view text, std::vector<std::string>* pieces, std::string* error) const = 0;
  virtual bool decode(const std::vector<int>& ids, std::string* text, std::string* error) const = 0;
};

// The plugin's entry points.
struct SentencePieceApi {
  // nullptr, with the reason in *error, when `model_file` is not a model.
  std::unique_ptr<SentencePieceEngine> (*load)(const std::string& model_file, std::string* error);
  // Trains with SentencePiece's trainer flags (`args`, without `input`) on the
  // lines `next_line` yields (it returns false at the end, or on a read error,
  // which the caller then reports itself). `seed` seeds SentencePiece's
  // process-wide generator. The serialized model, or false with *error.
  bool (*train)(const std::unordered_map<std::string, std::string>& args,
                const std::function<bool(std::string*)>& next_line, uint32_t seed, std::string* serialized_model,
                std::string* error);
};

// Loads the plugin once (next to the executable, in the build tree, or in
// $MTBERT_PLUGIN_DIR). UserError saying where it looked when it is missing.
const SentencePieceApi& sentencepiece_api();

}  // namespace mtbert

// The one symbol the plugin exports.
extern "C" const mtbert::SentencePieceApi* mtbert_sentencepiece_api();
