#include "core/user_error.h"
#include "support/sentencepiece_test_corpus.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "text/sentencepiece_training.h"
#include "text/tokenizer.h"
#include "text/wordpiece_tokenizer.h"

using Catch::Matchers::ContainsSubstring;

namespace {

const char* const kVocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nHello\n";

}  // namespace

TEST_CASE("a folder with vocab.txt loads WordPiece, lowercasing by default", "[tokenizer_loader]") {
  const mtbert::test::TempDir dir;
  dir.write("vocab.txt", kVocab);
  const auto tok = mtbert::load_tokenizer(dir.path());
  CHECK(tok->kind() == "wordpiece");
  CHECK(tok->encode("Hello") == std::vector<int64_t>{5});
}

TEST_CASE("tokenizer_config.json's do_lower_case is followed", "[tokenizer_loader]") {
  const mtbert::test::TempDir dir;
  dir.write("vocab.txt", kVocab);
  dir.write("tokenizer_config.json", R"({"do_lower_case": false, "strip_accents": null, "model_max_length": 512})");
  CHECK(mtbert::load_tokenizer(dir.path())->encode("Hello") == std::vector<int64_t>{6});
  dir.write("tokenizer_config.json", R"({"do_lower_case": true, "tokenize_chinese_chars": true})");
  CHECK(mtbert::load_tokenizer(dir.path())->encode("Hello") == std::vector<int64_t>{5});
}

TEST_CASE("bad tokenizer_config.json files are user errors naming the file", "[tokenizer_loader]") {
  const mtbert::test::TempDir dir;
  dir.write("vocab.txt", kVocab);
  for (const char* config : {R"({"do_lower_case": tru)", R"([true])", R"({"do_lower_case": "yes"})",
                             R"({"strip_accents": true})", R"({"tokenize_chinese_chars": false})"}) {
    INFO(config);
    dir.write("tokenizer_config.json", config);
    CHECK_THROWS_AS(mtbert::load_tokenizer(dir.path()), mtbert::UserError);
    CHECK_THROWS_WITH(mtbert::load_tokenizer(dir.path()), ContainsSubstring("tokenizer_config.json"));
  }
}

TEST_CASE("a folder with spm.model loads SentencePiece", "[tokenizer_loader]") {
  const mtbert::test::TempDir dir;
  const auto input = dir.write("corpus.txt", mtbert::test::joined_lines(mtbert::test::sentencepiece_test_corpus()));
  mtbert::SentencePieceTrainingOptions options;
  options.num_threads = 1;
  mtbert::train_sentencepiece({input}, dir / "spm.model", 100, options);
  const auto tok = mtbert::load_tokenizer(dir.path());
  CHECK(tok->kind() == "sentencepiece");
  CHECK(tok->special_ids().cls == 2);
}

TEST_CASE("a folder without a tokenizer is a user error naming it", "[tokenizer_loader]") {
  const mtbert::test::TempDir dir;
  CHECK_THROWS_WITH(mtbert::load_tokenizer(dir.path()), ContainsSubstring(dir.path().string()) && ContainsSubstring("vocab.txt"));
  CHECK_THROWS_WITH(mtbert::load_tokenizer(dir / "absent"), ContainsSubstring("absent"));
}

TEST_CASE("bert-base-uncased's folder loads as an uncased WordPiece tokenizer", "[tokenizer_loader]") {
  const auto data = mtbert::test::shared_data_dir();
  if (!data) MTBERT_SKIP("no shared data folder");
  const auto tok = mtbert::load_tokenizer(*data / "bert-base-uncased");
  CHECK(tok->vocab_size() == 30522);
  CHECK(tok->encode("Hello World") == std::vector<int64_t>{7592, 2088});
}
