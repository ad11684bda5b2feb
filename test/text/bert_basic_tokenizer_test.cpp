// Expected words follow HuggingFace's slow BertTokenizer semantics (see
// bert_basic_tokenizer.h); test/scripts/tokenizer_parity_test.py checks the
// same semantics at scale against an independent Python implementation.
#include "text/bert_basic_tokenizer.h"

#include "support/test_support.h"

using namespace std::string_view_literals;

namespace {

using Words = std::vector<std::string>;

Words lower(std::string_view text) { return mtbert::BertBasicTokenizer(true).tokenize(text); }
Words cased(std::string_view text) { return mtbert::BertBasicTokenizer(false).tokenize(text); }

}  // namespace

TEST_CASE("HuggingFace's documented examples", "[bert_basic_tokenizer]") {
  CHECK(lower(" \tHeLLo!how  \n Are yoU?  ") == Words{"hello", "!", "how", "are", "you", "?"});
  CHECK(cased(" \tHeLLo!how  \n Are yoU?  ") == Words{"HeLLo", "!", "how", "Are", "yoU", "?"});
  CHECK(lower("ah\u535A\u63A8zz") == Words{"ah", "\u535A", "\u63A8", "zz"});
  CHECK(lower("H\u00E9llo") == Words{"hello"});
  CHECK(cased("H\u00E9llo") == Words{"H\u00E9llo"});
}

TEST_CASE("lowercasing strips accents, cased keeps them, composed (NFC)", "[bert_basic_tokenizer]") {
  CHECK(lower("Héllo naïve résumé ÅNGSTRÖM") == Words{"hello", "naive", "resume", "angstrom"});
  CHECK(lower("He\u0301llo") == Words{"hello"});
  CHECK(cased("He\u0301llo") == Words{"H\u00E9llo"});
  CHECK(lower("Tiếng Việt") == Words{"tieng", "viet"});
  // A mark with nothing to attach to: dropped when lowercasing, kept when cased.
  CHECK(lower("\u0301a") == Words{"a"});
  CHECK(cased("\u0301a") == Words{"\u0301a"});
  // Hangul: NFC composes jamo; the lowercasing path's NFD decomposes syllables
  // (jamo are letters, not marks, so they stay).
  CHECK(cased("\u1100\u1161") == Words{"\uAC00"});
  CHECK(lower("\uAC00") == Words{"\u1100\u1161"});
}

TEST_CASE("each character is lowercased on its own", "[bert_basic_tokenizer]") {
  // No final-sigma rule: a word-final capital sigma becomes σ, not ς.
  CHECK(lower("ΣΑΣ ΟΔΥΣΣΕΥΣ ς") == Words{"σασ", "οδυσσευσ", "ς"});
  CHECK(cased("ΣΑΣ") == Words{"ΣΑΣ"});
  // U+0130 lowercases to "i" + U+0307 in Python; the dot is stripped.
  CHECK(lower("\u0130stanbul I\u0307") == Words{"istanbul", "i"});
  CHECK(cased("\u0130stanbul") == Words{"\u0130stanbul"});
  // KELVIN SIGN: lowercases to k; NFC maps it to K.
  CHECK(lower("\u212A") == Words{"k"});
  CHECK(cased("\u212A") == Words{"K"});
}

TEST_CASE("CJK ideographs are words of their own, Hangul and kana are not", "[bert_basic_tokenizer]") {
  CHECK(lower("中文abc日本") == Words{"中", "文", "abc", "日", "本"});
  CHECK(lower("\U00020000x\U0002B820") == Words{"\U00020000", "x", "\U0002B820"});
  // Compatibility ideographs become their unified twins under NFC and NFD.
  CHECK(lower("a\uF900b") == Words{"a", "\u8C48", "b"});
  CHECK(cased("\U0002F800") == Words{"\u4E3D"});
  CHECK(lower("こんにちは 안녕") == Words{"こんにちは", "\u110b\u1161\u11ab\u1102\u1167\u11bc"});
}

TEST_CASE("punctuation characters become words", "[bert_basic_tokenizer]") {
  CHECK(lower("...!!! -- a--b") == Words{".", ".", ".", "!", "!", "!", "-", "-", "a", "-", "-", "b"});
  CHECK(lower("don't it's O’Brien") == Words{"don", "'", "t", "it", "'", "s", "o", "’", "brien"});
  CHECK(lower("3.14 1,000,000") == Words{"3", ".", "14", "1", ",", "000", ",", "000"});
  // Every printable non-alphanumeric ASCII character counts, symbols included;
  // elsewhere only category P* does (€ is Sc, © is So).
  CHECK(lower("$5+1^~`") == Words{"$", "5", "+", "1", "^", "~", "`"});
  CHECK(lower("€5 ©x «a» ¿b?") == Words{"€5", "©x", "«", "a", "»", "¿", "b", "?"});
  // Characters that NFC (or NFD) maps to ASCII punctuation.
  CHECK(cased("a\u1FEFb a\u037Eb") == Words{"a", "`", "b", "a", ";", "b"});
}

TEST_CASE("emoji are symbols: kept, and joined once ZWJ is dropped", "[bert_basic_tokenizer]") {
  CHECK(lower("I love 🍕!") == Words{"i", "love", "🍕", "!"});
  CHECK(lower("👨\u200D👩\u200D👧 👍🏽") == Words{"👨👩👧", "👍🏽"});
}

TEST_CASE("cleaning drops controls and format characters, spaces separators", "[bert_basic_tokenizer]") {
  CHECK(lower("").empty());
  CHECK(lower(" \t\n\r\u00A0\u3000\u2028\u2029 ").empty());
  CHECK(lower("a\0b\x01"
              "c\uFFFDd\x7F"
              "e\u0085f"sv) == Words{"abcdef"});
  CHECK(lower("co\u00ADop a\u200Bb a\u200Db \uFEFFx") == Words{"coop", "ab", "ab", "x"});
  // Vertical tab and form feed are controls, not whitespace, for BERT.
  CHECK(lower("a\x0B"
              "b\x0C"
              "c") == Words{"abc"});
  // Private use, unassigned and noncharacter code points are category C*.
  CHECK(lower("a\uE000b\u0378c\uFDD0d") == Words{"abcd"});
  // Zs separators and the line/paragraph separators split words.
  CHECK(lower("a\u00A0b\u2009c\u2028d\u2029e") == Words{"a", "b", "c", "d", "e"});
}

TEST_CASE("invalid UTF-8 bytes read as U+FFFD and are dropped", "[bert_basic_tokenizer]") {
  CHECK(lower("ab\xFF"
              "cd \xC3") == Words{"abcd"});
  CHECK(lower("\xED\xA0\x80x") == Words{"x"});
}

TEST_CASE("never_split words are kept whole after cleaning and NFC", "[bert_basic_tokenizer]") {
  const mtbert::BertBasicTokenizer tokenizer(false, {"[UNK]"});
  // U+200B is dropped, KELVIN SIGN becomes K: both spell [UNK] only afterwards.
  CHECK(tokenizer.tokenize("[UN\u200BK] [UN\u212A] [UNK]x") == Words{"[UNK]", "[UNK]", "[", "UNK", "]", "x"});
}

TEST_CASE("split() appends to existing words", "[bert_basic_tokenizer]") {
  const mtbert::BertBasicTokenizer tokenizer(true);
  mtbert::BasicTokens words;
  tokenizer.split("Hello,", words);
  tokenizer.split(" wörld", words);
  REQUIRE(words.size() == 3);
  CHECK(words[0] == "hello");
  CHECK(words[1] == ",");
  CHECK(words[2] == "world");
  words.clear();
  CHECK(words.size() == 0);
}
