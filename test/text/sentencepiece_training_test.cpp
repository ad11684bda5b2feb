#include "text/sentencepiece_training.h"

#include "core/user_error.h"
#include "support/sentencepiece_test_corpus.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "text/sentencepiece_tokenizer.h"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::EndsWith;

namespace {

mtbert::SentencePieceTrainingOptions quick_options() {
  mtbert::SentencePieceTrainingOptions options;
  options.num_threads = 1;
  return options;
}

}  // namespace

TEST_CASE("a trained model reserves [PAD] [UNK] [CLS] [SEP] [MASK] at ids 0..4", "[sentencepiece_training]") {
  const mtbert::test::TempDir dir;
  const auto corpus = mtbert::test::sentencepiece_test_corpus();
  const auto input = dir.write("corpus.txt", mtbert::test::joined_lines(corpus));
  const auto model = dir / "spm.model";
  mtbert::train_sentencepiece({input}, model, 120, quick_options());

  const auto sp = mtbert::test::load_engine(model);
  CHECK(sp->piece_size() == 120);
  CHECK(sp->id_to_piece(0) == "[PAD]");
  CHECK(sp->id_to_piece(1) == "[UNK]");
  CHECK(sp->id_to_piece(2) == "[CLS]");
  CHECK(sp->id_to_piece(3) == "[SEP]");
  CHECK(sp->id_to_piece(4) == "[MASK]");
  CHECK(sp->pad_id() == 0);
  CHECK(sp->unk_id() == 1);
  CHECK(sp->bos_id() == 2);
  CHECK(sp->eos_id() == 3);
  CHECK(sp->is_control(4));

  // The same ids through the project's tokenizer.
  const mtbert::SentencePieceTokenizer tok(model);
  const auto& special = tok.special_ids();
  CHECK(std::vector<int64_t>{special.pad, special.unk, special.cls, special.sep, special.mask} ==
        std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(tok.vocab_size() == 120);

  // Lossless: plain lowercase words with single spaces survive normalization.
  for (int i = 0; i < 20; ++i) {
    std::vector<int> ids;
    for (const int64_t id : tok.encode(corpus[i])) ids.push_back(static_cast<int>(id));
    std::string decoded;
    std::string error;
    REQUIRE(sp->decode(ids, &decoded, &error));
    CHECK(decoded == corpus[i]);
  }
}

TEST_CASE("training reads several files, CRLF line ends, and trains BPE too", "[sentencepiece_training]") {
  const mtbert::test::TempDir dir;
  const auto corpus = mtbert::test::sentencepiece_test_corpus(200);
  std::string crlf;
  for (std::size_t i = 100; i < corpus.size(); ++i) crlf += corpus[i] + "\r\n";
  const auto first = dir.write("a.txt", mtbert::test::joined_lines({corpus.begin(), corpus.begin() + 100}));
  const auto second = dir.write("b.txt", crlf);
  auto options = quick_options();
  options.model_type = "bpe";
  mtbert::train_sentencepiece({first, second}, dir / "bpe.model", 100, options);

  const auto sp = mtbert::test::load_engine(dir / "bpe.model");
  CHECK(sp->piece_size() == 100);
  CHECK(sp->id_to_piece(4) == "[MASK]");
  for (int id = 0; id < sp->piece_size(); ++id) CHECK(sp->id_to_piece(id).find('\r') == std::string::npos);
}

TEST_CASE("training with the same seed and one thread is reproducible", "[sentencepiece_training]") {
  const mtbert::test::TempDir dir;
  const auto input = dir.write("corpus.txt", mtbert::test::joined_lines(mtbert::test::sentencepiece_test_corpus()));
  mtbert::train_sentencepiece({input}, dir / "one.model", 100, quick_options());
  mtbert::train_sentencepiece({input}, dir / "two.model", 100, quick_options());
  const auto one = mtbert::test::load_engine(dir / "one.model");
  const auto two = mtbert::test::load_engine(dir / "two.model");
  for (int id = 0; id < 100; ++id) CHECK(one->id_to_piece(id) == two->id_to_piece(id));
}

TEST_CASE("training errors are user errors naming the input", "[sentencepiece_training]") {
  const mtbert::test::TempDir dir;
  const auto good = dir.write("good.txt", mtbert::test::joined_lines(mtbert::test::sentencepiece_test_corpus()));
  const auto model = dir / "spm.model";

  CHECK_THROWS_WITH(mtbert::train_sentencepiece({good, dir / "missing.txt"}, model, 100, quick_options()),
                    ContainsSubstring("missing.txt"));
  const auto bad = dir.write("bad.txt", "fine line\nanother\nbroken \xC3\x28 text\n");
  CHECK_THROWS_WITH(mtbert::train_sentencepiece({good, bad}, model, 100, quick_options()), EndsWith("bad.txt:3: invalid UTF-8 at byte 8 of the line"));
  const auto blank = dir.write("blank.txt", "\n\r\n\n");
  CHECK_THROWS_AS(mtbert::train_sentencepiece({blank}, model, 100, quick_options()), mtbert::UserError);
  // Far more pieces than 300 short lines of 56 words can fill.
  CHECK_THROWS_WITH(mtbert::train_sentencepiece({good}, model, 50000, quick_options()), ContainsSubstring("Vocabulary size"));
  CHECK_THROWS_AS(mtbert::train_sentencepiece({good}, model, 5, quick_options()), mtbert::UserError);
  CHECK_THROWS_AS(mtbert::train_sentencepiece({}, model, 100, quick_options()), mtbert::UserError);
  auto bad_type = quick_options();
  bad_type.model_type = "trigram";
  CHECK_THROWS_AS(mtbert::train_sentencepiece({good}, model, 100, bad_type), mtbert::UserError);
  // Nothing half-written was left behind.
  CHECK_FALSE(std::filesystem::exists(model));
  CHECK_THROWS_AS(mtbert::train_sentencepiece({good}, dir / "no-such-dir" / "spm.model", 100, quick_options()),
                  mtbert::UserError);
}
