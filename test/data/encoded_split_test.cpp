#include "data/encoded_split.h"

#include "support/test_support.h"
#include "text/wordpiece_tokenizer.h"

using mtbert::EncodedSplit;
using mtbert::PairMode;
using mtbert::TaskSplit;
using mtbert::WordPieceTokenizer;

namespace {

using Ids = std::vector<int64_t>;

// Ids: a 0, b 1, c 2, d 3, then the special tokens: [PAD] 4, [UNK] 5, [CLS] 6,
// [SEP] 7, [MASK] 8 (not at 0, so that a pad id taken from anywhere else shows).
const std::vector<std::string> kVocab = {"a", "b", "c", "d", "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
constexpr int64_t kCls = 6, kSep = 7;

TaskSplit make_split(const std::string& task, std::vector<std::pair<std::string, std::string>> texts) {
  TaskSplit split;
  split.task = task;
  split.labeled = true;
  double label = 0;
  for (auto& [a, b] : texts) {
    mtbert::Example e;
    e.id = "id" + std::to_string(split.examples.size());
    e.text_a = a;
    e.text_b = b;
    e.label = label++;
    split.examples.push_back(e);
  }
  return split;
}

}  // namespace

TEST_CASE("single-text tasks: one [CLS] a [SEP] segment, pair encoding ignored", "[encoded_split]") {
  const WordPieceTokenizer tok(kVocab, true);
  const TaskSplit split = make_split("sst", {{"a b c", ""}, {"D", ""}});
  for (PairMode mode : {PairMode::siamese, PairMode::cross}) {
    const EncodedSplit enc = mtbert::encode_split(split, mtbert::builtin_task("sst"), tok, mode, 0);
    CHECK(enc.task == "sst");
    CHECK(enc.labeled);
    CHECK(enc.segments == 1);
    CHECK(enc.pad_id == 4);
    REQUIRE(enc.examples.size() == 2);
    REQUIRE(enc.examples[0].segments.size() == 1);
    CHECK(enc.examples[0].segments[0].ids == Ids{kCls, 0, 1, 2, kSep});
    CHECK(enc.examples[0].length == 5);
    CHECK(enc.examples[1].segments[0].ids == Ids{kCls, 3, kSep});
    CHECK(enc.examples[1].length == 3);
    CHECK(enc.examples[1].label == 1.0);
  }
}

TEST_CASE("siamese pairs: two single encodings, length of the longer", "[encoded_split]") {
  const WordPieceTokenizer tok(kVocab, true);
  const TaskSplit split = make_split("para", {{"a b", "c d a b"}});
  const EncodedSplit enc = mtbert::encode_split(split, mtbert::builtin_task("para"), tok, PairMode::siamese, 0);
  CHECK(enc.segments == 2);
  REQUIRE(enc.examples[0].segments.size() == 2);
  CHECK(enc.examples[0].segments[0].ids == Ids{kCls, 0, 1, kSep});
  CHECK(enc.examples[0].segments[1].ids == Ids{kCls, 2, 3, 0, 1, kSep});
  CHECK(enc.examples[0].segments[1].token_type_ids == Ids{0, 0, 0, 0, 0, 0});
  CHECK(enc.examples[0].length == 6);
  // max_length truncates each text on its own.
  const EncodedSplit cut = mtbert::encode_split(split, mtbert::builtin_task("para"), tok, PairMode::siamese, 4);
  CHECK(cut.examples[0].segments[0].ids == Ids{kCls, 0, 1, kSep});
  CHECK(cut.examples[0].segments[1].ids == Ids{kCls, 2, 3, kSep});
  CHECK(cut.examples[0].length == 4);
}

TEST_CASE("cross pairs: one [CLS] a [SEP] b [SEP] input, longest_first truncation", "[encoded_split]") {
  const WordPieceTokenizer tok(kVocab, true);
  const TaskSplit split = make_split("sts", {{"a b", "c d a b"}});
  const EncodedSplit enc = mtbert::encode_split(split, mtbert::builtin_task("sts"), tok, PairMode::cross, 0);
  CHECK(enc.segments == 1);
  REQUIRE(enc.examples[0].segments.size() == 1);
  CHECK(enc.examples[0].segments[0].ids == Ids{kCls, 0, 1, kSep, 2, 3, 0, 1, kSep});
  CHECK(enc.examples[0].segments[0].token_type_ids == Ids{0, 0, 0, 0, 1, 1, 1, 1, 1});
  CHECK(enc.examples[0].length == 9);
  // 2 + 4 + 3 = 9 > 7: two tokens go from the longer second text.
  const EncodedSplit cut = mtbert::encode_split(split, mtbert::builtin_task("sts"), tok, PairMode::cross, 7);
  CHECK(cut.examples[0].segments[0].ids == Ids{kCls, 0, 1, kSep, 2, 3, kSep});
  CHECK(cut.examples[0].length == 7);
}

TEST_CASE("unlabeled splits stay unlabeled", "[encoded_split]") {
  const WordPieceTokenizer tok(kVocab, true);
  TaskSplit split = make_split("sst", {{"a", ""}});
  split.labeled = false;
  CHECK_FALSE(mtbert::encode_split(split, mtbert::builtin_task("sst"), tok, PairMode::cross, 0).labeled);
}
