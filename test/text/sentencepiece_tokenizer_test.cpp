#include "text/sentencepiece_tokenizer.h"

#include <fstream>
#include <stdexcept>
#include <unordered_map>

#include "core/user_error.h"
#include "support/sentencepiece_test_corpus.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "text/sentencepiece_training.h"

using Catch::Matchers::ContainsSubstring;
using mtbert::SentencePieceTokenizer;

namespace {

using Ids = std::vector<int64_t>;

// Trains a model with SentencePiece's own trainer and the given special-id
// layout (e.g. DeBERTa-v3's), to see how the tokenizer resolves it.
std::filesystem::path train_with_layout(const mtbert::test::TempDir& dir, const std::string& name,
                                        std::unordered_map<std::string, std::string> layout) {
  const auto corpus = mtbert::test::sentencepiece_test_corpus();
  layout["vocab_size"] = "100";
  layout["num_threads"] = "1";
  layout["minloglevel"] = "1";
  std::size_t next = 0;
  auto next_line = [&](std::string* line) {
    if (next == corpus.size()) return false;
    *line = corpus[next++];
    return true;
  };
  std::string model, error;
  const bool trained = mtbert::sentencepiece_api().train(layout, next_line, 42, &model, &error);
  INFO(error);
  REQUIRE(trained);
  const auto path = dir / (name + ".model");
  std::ofstream(path, std::ios::binary) << model;
  return path;
}

std::filesystem::path train_bert_layout(const mtbert::test::TempDir& dir) {
  const auto input = dir.write("corpus.txt", mtbert::test::joined_lines(mtbert::test::sentencepiece_test_corpus()));
  mtbert::SentencePieceTrainingOptions options;
  options.num_threads = 1;
  mtbert::train_sentencepiece({input}, dir / "spm.model", 100, options);
  return dir / "spm.model";
}

}  // namespace

TEST_CASE("encode and tokenize are SentencePiece's own", "[sentencepiece_tokenizer]") {
  const mtbert::test::TempDir dir;
  const auto model = train_bert_layout(dir);
  const SentencePieceTokenizer tok(model);
  const auto sp = mtbert::test::load_engine(model);

  for (const std::string text : {"kariton mosu lape", "  Kariton   MOSU, digo ba!", "", "émigré 中文 🍕"}) {
    std::vector<int> want;
    std::string error;
    REQUIRE(sp->encode(text, &want, &error));
    CHECK(tok.encode(text) == Ids(want.begin(), want.end()));
  }
  CHECK(tok.kind() == "sentencepiece");
}

TEST_CASE("tokenize gives the vocabulary piece of each id", "[sentencepiece_tokenizer]") {
  const mtbert::test::TempDir dir;
  const auto model = train_bert_layout(dir);
  const SentencePieceTokenizer tok(model);
  const auto sp = mtbert::test::load_engine(model);
  std::vector<std::string> want;
  std::string error;
  REQUIRE(sp->encode_pieces("kariton mosu lape", &want, &error));
  CHECK(tok.tokenize("kariton mosu lape") == want);
  // SentencePiece's own pieces would spell out the unknown "v"; ours name the id.
  const std::vector<std::string> pieces = tok.tokenize("vvv");
  CHECK(std::count(pieces.begin(), pieces.end(), "[UNK]") == 1);
}

TEST_CASE("special tokens written in the text keep their ids", "[sentencepiece_tokenizer]") {
  const mtbert::test::TempDir dir;
  const SentencePieceTokenizer tok(train_bert_layout(dir));
  const Ids ids = tok.encode("[CLS] the movie [MASK] good [SEP][PAD]");
  REQUIRE(ids.size() >= 6);
  CHECK(ids.front() == 2);
  CHECK(std::count(ids.begin(), ids.end(), 4) == 1);
  CHECK(Ids(ids.end() - 2, ids.end()) == Ids{3, 0});
  CHECK(tok.tokenize("[UNK]") == std::vector<std::string>{"[UNK]"});
  // Case matters, as for WordPiece.
  const Ids lowercase = tok.encode("[mask]");
  CHECK(std::count(lowercase.begin(), lowercase.end(), 4) == 0);
}

TEST_CASE("DeBERTa-v3's layout: named pieces, [MASK] appended after the vocabulary", "[sentencepiece_tokenizer]") {
  const mtbert::test::TempDir dir;
  const auto model = train_with_layout(dir, "deberta",
                                       {{"pad_id", "0"},
                                        {"bos_id", "1"},
                                        {"eos_id", "2"},
                                        {"unk_id", "3"},
                                        {"pad_piece", "[PAD]"},
                                        {"bos_piece", "[CLS]"},
                                        {"eos_piece", "[SEP]"},
                                        {"unk_piece", "[UNK]"}});
  const SentencePieceTokenizer tok(model);
  const auto& special = tok.special_ids();
  CHECK(Ids{special.pad, special.cls, special.sep, special.unk, special.mask} == Ids{0, 1, 2, 3, 100});
  CHECK(tok.vocab_size() == 101);
  CHECK(tok.id_to_piece(100) == "[MASK]");
  CHECK(tok.piece_to_id("[MASK]") == 100);
  const Ids ids = tok.encode("the [MASK] film");
  CHECK(std::count(ids.begin(), ids.end(), 100) == 1);
  CHECK_THROWS_AS(tok.id_to_piece(101), mtbert::UserError);
}

TEST_CASE("without named pieces the model's own special ids are used", "[sentencepiece_tokenizer]") {
  const mtbert::test::TempDir dir;
  const auto model =
      train_with_layout(dir, "plain", {{"unk_id", "0"}, {"bos_id", "1"}, {"eos_id", "2"}, {"pad_id", "3"}});
  const SentencePieceTokenizer tok(model);
  const auto& special = tok.special_ids();
  CHECK(Ids{special.unk, special.cls, special.sep, special.pad, special.mask} == Ids{0, 1, 2, 3, 100});
  CHECK(tok.id_to_piece(1) == "<s>");
  CHECK(tok.encode("<s>the</s>").front() == 1);
  CHECK(tok.encode("<s>the</s>").back() == 2);
  CHECK(tok.piece_to_id("no-such-piece") == -1);
  CHECK(tok.piece_to_id("<unk>") == 0);
}

TEST_CASE("a model without a pad id is refused, saying what is missing", "[sentencepiece_tokenizer]") {
  const mtbert::test::TempDir dir;
  // SentencePiece's defaults: <unk>=0, <s>=1, </s>=2, no padding.
  const auto model = train_with_layout(dir, "nopad", {});
  CHECK_THROWS_WITH(SentencePieceTokenizer(model), ContainsSubstring("[PAD]") && ContainsSubstring("nopad.model"));
}

TEST_CASE("missing and corrupt model files are user errors naming them", "[sentencepiece_tokenizer]") {
  const mtbert::test::TempDir dir;
  CHECK_THROWS_WITH(SentencePieceTokenizer(dir / "absent.model"), ContainsSubstring("absent.model"));
  const auto corrupt = dir.write("corrupt.model", "this is not a protobuf \x01\x02\xff");
  CHECK_THROWS_AS(SentencePieceTokenizer(corrupt), mtbert::UserError);
  CHECK_THROWS_WITH(SentencePieceTokenizer(corrupt), ContainsSubstring("corrupt.model"));
  CHECK_THROWS_WITH(SentencePieceTokenizer(dir.path()), ContainsSubstring(dir.path().string()));
}
