// The pretraining config's rules across keys: each refused by the loader, at
// the value's file and line, before a run folder exists.
#include "config/pretrain_config.h"

#include "support/temp_dir.h"
#include "support/test_support.h"
#include "support/user_error_of.h"

using Catch::Matchers::EndsWith;

namespace {

const char* const kMinimal = "corpus: {files: [a.txt]}\n";

std::string error_of(const mtbert::test::TempDir& dir, const std::string& text) {
  return mtbert::test::user_error_of([&] { mtbert::load_pretrain_config(dir.write("p.yaml", text)); });
}

}  // namespace

TEST_CASE("a SentencePiece vocabulary trained on [tasks] is refused when the config loads", "[pretrain_config]") {
  const mtbert::test::TempDir dir;
  const std::string file = (dir / "p.yaml").string();
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "model:\n  tokenizer:\n    kind: sentencepiece\n"
                                                   "    train_from: [tasks]\n"),
             EndsWith(file + ":5: model.tokenizer.train_from: [tasks] is for experiments; give the text files to "
                             "train SentencePiece on"));
  CHECK(error_of(dir, std::string(kMinimal) +
                          "model: {tokenizer: {kind: sentencepiece, train_from: [corpus.txt]}}\n") == "(no error)");
}

TEST_CASE("model.config keys are checked as in an experiment", "[pretrain_config]") {
  const mtbert::test::TempDir dir;
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "model:\n  config:\n    hidden_sise: 64\n"),
             EndsWith(":4: model.config.hidden_sise: not a key the encoder reads (did you mean \"hidden_size\"?)"));
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "model:\n  config:\n    hidden_size: wide\n"),
             EndsWith(":4: model.config.hidden_size: expected an integer, got 'wide'"));
}
