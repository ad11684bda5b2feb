// Expected encodings follow HuggingFace's
// `tokenizer(a, b, truncation=True, max_length=N)` for BERT.
#include "text/sequence_encoder.h"

#include "core/user_error.h"
#include "support/test_support.h"
#include "text/wordpiece_tokenizer.h"

using mtbert::Encoding;
using mtbert::SpecialTokenIds;

namespace {

using Ids = std::vector<int64_t>;

SpecialTokenIds bert_special() {
  SpecialTokenIds s;
  s.pad = 0;
  s.unk = 100;
  s.cls = 101;
  s.sep = 102;
  s.mask = 103;
  return s;
}

Ids range(int64_t from, int64_t count) {
  Ids ids;
  for (int64_t i = 0; i < count; ++i) ids.push_back(from + i);
  return ids;
}

}  // namespace

TEST_CASE("single sequence: [CLS] a [SEP], types 0, mask 1", "[sequence_encoder]") {
  const Encoding e = mtbert::encode_ids(bert_special(), {7, 8, 9}, 0);
  CHECK(e.ids == Ids{101, 7, 8, 9, 102});
  CHECK(e.token_type_ids == Ids{0, 0, 0, 0, 0});
  CHECK(e.attention_mask == Ids{1, 1, 1, 1, 1});
  CHECK(mtbert::encode_ids(bert_special(), {}, 0).ids == Ids{101, 102});
}

TEST_CASE("single sequence truncation keeps the start", "[sequence_encoder]") {
  CHECK(mtbert::encode_ids(bert_special(), {7, 8, 9}, 4).ids == Ids{101, 7, 8, 102});
  CHECK(mtbert::encode_ids(bert_special(), {7, 8, 9}, 5).ids == Ids{101, 7, 8, 9, 102});
  CHECK(mtbert::encode_ids(bert_special(), {7, 8, 9}, 2).ids == Ids{101, 102});
}

TEST_CASE("pair: [CLS] a [SEP] b [SEP], types 0 then 1", "[sequence_encoder]") {
  const Encoding e = mtbert::encode_id_pair(bert_special(), {7, 8}, {9}, 0);
  CHECK(e.ids == Ids{101, 7, 8, 102, 9, 102});
  CHECK(e.token_type_ids == Ids{0, 0, 0, 0, 1, 1});
  CHECK(e.attention_mask == Ids{1, 1, 1, 1, 1, 1});
  const Encoding empty = mtbert::encode_id_pair(bert_special(), {}, {}, 0);
  CHECK(empty.ids == Ids{101, 102, 102});
  CHECK(empty.token_type_ids == Ids{0, 0, 1});
}

TEST_CASE("longest_first truncation", "[sequence_encoder]") {
  const auto special = bert_special();
  SECTION("the longer side loses tokens from its end until both are as long") {
    // 6 + 2 + 3 = 11 > 8: three tokens go, all from a (6 -> 5 -> 4 -> 3).
    const Encoding e = mtbert::encode_id_pair(special, range(10, 6), range(20, 2), 8);
    CHECK(e.ids == Ids{101, 10, 11, 12, 102, 20, 21, 102});
    CHECK(e.token_type_ids == Ids{0, 0, 0, 0, 0, 1, 1, 1});
  }
  SECTION("on a tie the second sequence loses first") {
    // 3 + 3 + 3 = 9 > 8: one token goes, from b.
    CHECK(mtbert::encode_id_pair(special, range(10, 3), range(20, 3), 8).ids == Ids{101, 10, 11, 12, 102, 20, 21, 102});
    // 3 + 3 + 3 = 9 > 7: b goes first (3, 2), then the longer a (2, 2).
    CHECK(mtbert::encode_id_pair(special, range(10, 3), range(20, 3), 7).ids == Ids{101, 10, 11, 102, 20, 21, 102});
  }
  SECTION("b longer, then alternating once equal") {
    // 2 + 5 + 3 = 10 > 6: four go, all from b: 5 -> 2 while longer, then 2 -> 1 on the tie.
    CHECK(mtbert::encode_id_pair(special, range(10, 2), range(20, 5), 6).ids == Ids{101, 10, 11, 102, 20, 102});
  }
  SECTION("one side empty") {
    CHECK(mtbert::encode_id_pair(special, {}, range(20, 5), 5).ids == Ids{101, 102, 20, 21, 102});
    CHECK(mtbert::encode_id_pair(special, range(10, 5), {}, 5).ids == Ids{101, 10, 11, 102, 102});
  }
  SECTION("down to the special tokens alone") {
    CHECK(mtbert::encode_id_pair(special, range(10, 4), range(20, 4), 3).ids == Ids{101, 102, 102});
  }
}

TEST_CASE("max_length too small for the special tokens is a user error", "[sequence_encoder]") {
  const auto special = bert_special();
  CHECK_THROWS_AS(mtbert::encode_ids(special, {7}, 1), mtbert::UserError);
  CHECK_THROWS_AS(mtbert::encode_ids(special, {7}, -1), mtbert::UserError);
  CHECK_THROWS_AS(mtbert::encode_id_pair(special, {}, {}, 2), mtbert::UserError);
  CHECK_THROWS_AS(mtbert::encode_id_pair(special, {7}, {8}, -5), mtbert::UserError);
}

TEST_CASE("encode_single and encode_pair tokenize first", "[sequence_encoder]") {
  const mtbert::WordPieceTokenizer tok({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "!"}, true);
  CHECK(mtbert::encode_single(tok, "Hello world!", 0).ids == Ids{2, 5, 6, 7, 3});
  CHECK(mtbert::encode_single(tok, "Hello world!", 4).ids == Ids{2, 5, 6, 3});
  const Encoding pair = mtbert::encode_pair(tok, "Hello world", "world!", 0);
  CHECK(pair.ids == Ids{2, 5, 6, 3, 6, 7, 3});
  CHECK(pair.token_type_ids == Ids{0, 0, 0, 0, 1, 1, 1});
  CHECK(mtbert::encode_pair(tok, "Hello world", "world!", 6).ids == Ids{2, 5, 6, 3, 6, 3});
}

TEST_CASE("pad_batch pads to the longest row with pad id, type 0, mask 0", "[sequence_encoder]") {
  const auto special = bert_special();
  const std::vector<Encoding> encodings = {mtbert::encode_ids(special, {7}, 0),
                                           mtbert::encode_id_pair(special, {7}, {8}, 0)};
  const mtbert::PaddedBatch batch = mtbert::pad_batch(encodings, special.pad);
  CHECK(batch.batch == 2);
  CHECK(batch.length == 5);
  CHECK(batch.ids == Ids{101, 7, 102, 0, 0, /**/ 101, 7, 102, 8, 102});
  CHECK(batch.token_type_ids == Ids{0, 0, 0, 0, 0, /**/ 0, 0, 0, 1, 1});
  CHECK(batch.attention_mask == Ids{1, 1, 1, 0, 0, /**/ 1, 1, 1, 1, 1});

  const mtbert::PaddedBatch wide = mtbert::pad_batch(encodings, 99, 7);
  CHECK(wide.length == 7);
  CHECK(wide.ids == Ids{101, 7, 102, 99, 99, 99, 99, /**/ 101, 7, 102, 8, 102, 99, 99});

  const mtbert::PaddedBatch none = mtbert::pad_batch({}, 0);
  CHECK(none.batch == 0);
  CHECK(none.ids.empty());
}
