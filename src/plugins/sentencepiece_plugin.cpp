// libmtbert_sentencepiece.so: the only code that includes SentencePiece's
// headers or links its libraries (see text/sentencepiece_engine.h for why).
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstddef>
#include <type_traits>
#include <utility>

#include "text/sentencepiece_engine.h"

namespace mtbert {

namespace {

// The status SentencePiece's calls return: sentencepiece::util::Status up to
// 0.2.0, absl::Status from 0.2.1 on (Debian sid); both have ok(), ToString()
// and message().
using Status = decltype(std::declval<const sentencepiece::SentenceIterator&>().status());

// SentencePiece 0.2 decodes ids from an absl::Span<const int> and deprecates
// its std::vector overload; 0.1 (Debian 12) has only the vector one. A span
// is made from {pointer, size}, which no vector overload takes, so whether
// that call compiles says which release this is.
template <class Processor, class = void>
struct DecodesSpans : std::false_type {};
template <class Processor>
struct DecodesSpans<Processor, std::void_t<decltype(std::declval<const Processor&>().Decode(
                                   {std::declval<const int*>(), std::size_t{}}, std::declval<std::string*>()))>>
    : std::true_type {};

template <class Processor>
Status decode_ids(const Processor& processor, const std::vector<int>& ids, std::string* text) {
  if constexpr (DecodesSpans<Processor>::value) return processor.Decode({ids.data(), ids.size()}, text);
  else return processor.Decode(ids, text);
}

class Engine final : public SentencePieceEngine {
 public:
  bool load(const std::string& model_file, std::string* error) {
    const auto status = processor_.Load(model_file);
    if (!status.ok()) *error = status.ToString();
    return status.ok();
  }

  int piece_size() const override { return processor_.GetPieceSize(); }
  int piece_to_id(std::string_view piece) const override { return processor_.PieceToId(piece); }
  std::string id_to_piece(int id) const override { return processor_.IdToPiece(id); }
  bool is_control(int id) const override { return processor_.IsControl(id); }
  int pad_id() const override { return processor_.pad_id(); }
  int unk_id() const override { return processor_.unk_id(); }
  int bos_id() const override { return processor_.bos_id(); }
  int eos_id() const override { return processor_.eos_id(); }

  bool encode(std::string_view text, std::vector<int>* ids, std::string* error) const override {
    return report(processor_.Encode(text, ids), error);
  }
  bool encode_pieces(std::string_view text, std::vector<std::string>* pieces, std::string* error) const override {
    return report(processor_.Encode(text, pieces), error);
  }
  bool decode(const std::vector<int>& ids, std::string* text, std::string* error) const override {
    return report(decode_ids(processor_, ids, text), error);
  }

 private:
  static bool report(const Status& status, std::string* error) {
    if (!status.ok()) *error = status.ToString();
    return status.ok();
  }

  sentencepiece::SentencePieceProcessor processor_;
};

// SentencePiece's trainer pulls sentences from an iterator; ours pulls them
// from the caller's callback.
class CallbackIterator final : public sentencepiece::SentenceIterator {
 public:
  explicit CallbackIterator(const std::function<bool(std::string*)>& next_line) : next_line_(next_line) { Next(); }
  bool done() const override { return done_; }
  const std::string& value() const override { return line_; }
  Status status() const override { return {}; }
  void Next() override { done_ = !next_line_(&line_); }

 private:
  const std::function<bool(std::string*)>& next_line_;
  std::string line_;
  bool done_ = false;
};

std::unique_ptr<SentencePieceEngine> load(const std::string& model_file, std::string* error) {
  auto engine = std::make_unique<Engine>();
  if (!engine->load(model_file, error)) return nullptr;
  return engine;
}

bool train(const std::unordered_map<std::string, std::string>& args,
           const std::function<bool(std::string*)>& next_line, uint32_t seed, std::string* serialized_model,
           std::string* error) {
  sentencepiece::SetRandomGeneratorSeed(seed);
  CallbackIterator lines(next_line);
  const auto status = sentencepiece::SentencePieceTrainer::Train(args, &lines, serialized_model);
  if (!status.ok()) *error = status.message();
  return status.ok();
}

const SentencePieceApi kApi{&load, &train};

}  // namespace

}  // namespace mtbert

extern "C" __attribute__((visibility("default"))) const mtbert::SentencePieceApi* mtbert_sentencepiece_api() {
  return &mtbert::kApi;
}
