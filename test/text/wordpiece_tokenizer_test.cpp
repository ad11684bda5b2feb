#include "text/wordpiece_tokenizer.h"

#include <stdexcept>

#include "core/user_error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::EndsWith;
using mtbert::WordPieceTokenizer;
using namespace std::string_view_literals;

namespace {

using Ids = std::vector<int64_t>;
using Pieces = std::vector<std::string>;

// Ids: 0-4 the special tokens, 5 un, 6 ##aff, 7 ##able, 8 a, 9 ##a, 10 hello,
// 11 Hello, 12 é, 13 ##é, 14 !, 15 ##ll.
const std::vector<std::string> kTinyVocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un",  "##aff", "##able",
                                             "a",     "##a",   "hello", "Hello", "é",      "##é", "!",     "##ll"};

std::unique_ptr<WordPieceTokenizer> bert_base_uncased() {
  const auto data = mtbert::test::shared_data_dir();
  if (!data) return nullptr;
  return WordPieceTokenizer::from_vocab_file(*data / "bert-base-uncased" / "vocab.txt", true);
}

}  // namespace

TEST_CASE("WordPiece takes the longest piece first, ## for continuations", "[wordpiece_tokenizer]") {
  const WordPieceTokenizer tok(kTinyVocab, true);
  CHECK(tok.tokenize("unaffable") == Pieces{"un", "##aff", "##able"});
  CHECK(tok.encode("unaffable") == Ids{5, 6, 7});
  CHECK(tok.encode("aaa") == Ids{8, 9, 9});
  // A word the vocabulary cannot cover is one [UNK], not a partial split.
  CHECK(tok.encode("unaffablez hello") == Ids{1, 10});
  // "##ll" exists but "ll" does not: at a word's start only whole pieces match.
  CHECK(tok.encode("ll") == Ids{1});
}

TEST_CASE("words over 100 code points are [UNK]", "[wordpiece_tokenizer]") {
  const WordPieceTokenizer tok(kTinyVocab, false);
  CHECK(tok.encode(std::string(100, 'a')).size() == 100);
  CHECK(tok.encode(std::string(101, 'a')) == Ids{1});
  // Code points, not bytes: é is two bytes (and kept: the tokenizer is cased).
  std::string e100;
  for (int i = 0; i < 100; ++i) e100 += "é";
  CHECK(tok.encode(e100).size() == 100);
  CHECK(tok.encode(e100 + "é") == Ids{1});
}

TEST_CASE("special tokens in the text keep their ids", "[wordpiece_tokenizer]") {
  const WordPieceTokenizer tok(kTinyVocab, true);
  CHECK(tok.encode("[CLS]hello[SEP] [MASK]") == Ids{2, 10, 3, 4});
  CHECK(tok.tokenize("[PAD][UNK]") == Pieces{"[PAD]", "[UNK]"});
  CHECK(tok.special_ids().pad == 0);
  CHECK(tok.special_ids().unk == 1);
  CHECK(tok.special_ids().cls == 2);
  CHECK(tok.special_ids().sep == 3);
  CHECK(tok.special_ids().mask == 4);
}

TEST_CASE("a cased vocabulary keeps case", "[wordpiece_tokenizer]") {
  const WordPieceTokenizer cased(kTinyVocab, false);
  const WordPieceTokenizer uncased(kTinyVocab, true);
  CHECK(cased.encode("Hello hello") == Ids{11, 10});
  CHECK(uncased.encode("Hello hello") == Ids{10, 10});
  CHECK(cased.encode("é") == Ids{12});
  CHECK(uncased.encode("é") == Ids{1});  // accent stripped to "e", not in the vocabulary
  CHECK_FALSE(cased.lower_case());
}

TEST_CASE("vocabulary lookups", "[wordpiece_tokenizer]") {
  const WordPieceTokenizer tok(kTinyVocab, true);
  CHECK(tok.vocab_size() == 16);
  CHECK(tok.piece_to_id("##aff") == 6);
  CHECK(tok.piece_to_id("aff") == -1);
  CHECK(tok.id_to_piece(7) == "##able");
  CHECK_THROWS_AS(tok.id_to_piece(16), mtbert::UserError);
  CHECK_THROWS_AS(tok.id_to_piece(-1), mtbert::UserError);
  CHECK(tok.kind() == "wordpiece");
  // A piece listed twice keeps its last id, like HuggingFace's dict.
  auto vocab = kTinyVocab;
  vocab.push_back("hello");
  CHECK(WordPieceTokenizer(vocab, true).encode("hello") == Ids{16});
}

TEST_CASE("a vocabulary without the special tokens is refused", "[wordpiece_tokenizer]") {
  const std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello"};
  CHECK_THROWS_WITH(WordPieceTokenizer(vocab, true), ContainsSubstring("[MASK]"));
}

TEST_CASE("vocab.txt files: line ends, errors naming the file", "[wordpiece_tokenizer]") {
  const mtbert::test::TempDir dir;
  // \r\n, \r and \n all end a line (Python's universal newlines); no final newline needed.
  const auto crlf = dir.write("crlf.txt", "[PAD]\r\n[UNK]\r[CLS]\n[SEP]\r\n[MASK]\r\nhello\r\nworld");
  const auto tok = WordPieceTokenizer::from_vocab_file(crlf, true);
  CHECK(tok->vocab_size() == 7);
  CHECK(tok->encode("Hello world") == Ids{5, 6});

  CHECK_THROWS_WITH(WordPieceTokenizer::from_vocab_file(dir / "missing.txt", true), ContainsSubstring("missing.txt"));
  const auto bad = dir.write("bad.txt", "[PAD]\n[UNK]\n[CLS]\nab\xFF\n");
  CHECK_THROWS_WITH(WordPieceTokenizer::from_vocab_file(bad, true), EndsWith("bad.txt:4: invalid UTF-8 at byte 3 of the line"));
  const auto incomplete = dir.write("incomplete.txt", "[PAD]\n[UNK]\n");
  CHECK_THROWS_AS(WordPieceTokenizer::from_vocab_file(incomplete, true), mtbert::UserError);
  CHECK_THROWS_WITH(WordPieceTokenizer::from_vocab_file(incomplete, true), ContainsSubstring("incomplete.txt"));
}

// Expected ids checked by hand against the vocabulary file: id = line - 1.
TEST_CASE("bert-base-uncased: ids as HuggingFace gives them", "[wordpiece_tokenizer]") {
  const auto tok = bert_base_uncased();
  if (!tok) MTBERT_SKIP("no shared data folder");
  CHECK(tok->vocab_size() == 30522);
  const auto& special = tok->special_ids();
  CHECK(Ids{special.pad, special.unk, special.cls, special.sep, special.mask} == Ids{0, 100, 101, 102, 103});

  CHECK(tok->encode("Héllo naïve résumé") == Ids{7592, 15743, 13746});
  CHECK(tok->encode("H\u00E9llo") == Ids{7592});
  CHECK(tok->encode("  \tHeLLo!how  \n Are yoU?  ") == Ids{7592, 999, 2129, 2024, 2017, 1029});
  // 推 is not in the vocabulary; "zz" is not either, but z and ##z are.
  CHECK(tok->tokenize("ah\u535A\u63A8zz") == Pieces{"ah", "博", "[UNK]", "z", "##z"});
  CHECK(tok->encode("ah\u535A\u63A8zz") == Ids{6289, 1786, 100, 1062, 2480});
  CHECK(tok->encode("中文東京") == Ids{1746, 1861, 1879, 1755});
  CHECK(tok->encode("I love 🍕 and 😀!") == Ids{1045, 2293, 100, 1998, 100, 999});
  CHECK(tok->encode("...!!! -- a--b") == Ids{1012, 1012, 1012, 999, 999, 999, 1011, 1011, 1037, 1011, 1011, 1038});
  CHECK(tok->encode("don't it's") == Ids{2123, 1005, 1056, 2009, 1005, 1055});
  CHECK(tok->encode("3.14 1,000,000") == Ids{1017, 1012, 2403, 1015, 1010, 2199, 1010, 2199});
  CHECK(tok->encode("unaffable") == Ids{14477, 20961, 3468});
  CHECK(tok->encode(std::string(101, 'a')) == Ids{100});
  CHECK(tok->encode("").empty());
  CHECK(tok->encode(" \t \u00A0 \u2028 ").empty());
  CHECK(tok->encode("a\x01"
                    "b\0\uFFFDc d"sv) == Ids{5925, 1040});
  CHECK(tok->tokenize("ΣΑΣ ς") == Pieces{"σ", "##α", "##σ", "ς"});
  CHECK(tok->encode("ΣΑΣ ς") == Ids{1173, 14608, 29733, 1172});
  CHECK(tok->encode("\u0130stanbul") == Ids{9960});
  CHECK(tok->encode("a\u200Db") == Ids{11113});
  CHECK(tok->encode("a\u2028b") == Ids{1037, 1038});
  CHECK(tok->encode("[CLS] hello [SEP] [cls] x[SEP]y") ==
        Ids{101, 7592, 102, 1031, 18856, 2015, 1033, 1060, 102, 1061});
}
