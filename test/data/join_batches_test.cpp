// join_batches: the rows of several tasks' batches stacked, each segment
// padded to the longest with its batch's pad id, mask 0 and token type 0.
#include "data/join_batches.h"

#include <limits>

#include <torch/torch.h>

#include "support/test_support.h"

using namespace mtbert;

namespace {

TokenBatch tokens(std::vector<std::vector<int64_t>> ids, bool with_types = true) {
  const int64_t rows = static_cast<int64_t>(ids.size()), length = static_cast<int64_t>(ids[0].size());
  std::vector<int64_t> flat;
  for (const auto& row : ids) flat.insert(flat.end(), row.begin(), row.end());
  TokenBatch t;
  t.input_ids = torch::tensor(flat, torch::kLong).view({rows, length});
  t.attention_mask = torch::ones({rows, length}, torch::kLong);
  if (with_types) t.token_type_ids = torch::ones({rows, length}, torch::kLong);
  return t;
}

TaskBatch batch(std::string task, std::vector<TokenBatch> segments, int64_t pad_id) {
  TaskBatch b;
  b.task = std::move(task);
  b.segments = std::move(segments);
  for (int64_t i = 0; i < b.segments[0].input_ids.size(0); ++i) b.indices.push_back(i);
  b.global_size = b.size();
  b.pad_id = pad_id;
  return b;
}

}  // namespace

TEST_CASE("join_batches stacks every segment's rows, padded to the longest", "[data][join]") {
  const auto a = batch("a", {tokens({{5, 6}, {7, 8}})}, 0);
  const auto b = batch("b", {tokens({{1, 2, 3}}, false), tokens({{4, 5, 6, 7}}, false)}, 3);
  const auto joined = join_batches({&a, &b});

  REQUIRE(joined.parts.size() == 2);
  CHECK(joined.parts[0].task == "a");
  CHECK(joined.parts[0].first_row == 0);
  CHECK(joined.parts[0].rows == 2);
  CHECK(joined.parts[0].segments == 1);
  CHECK(joined.parts[1].task == "b");
  CHECK(joined.parts[1].first_row == 2);
  CHECK(joined.parts[1].rows == 1);
  CHECK(joined.parts[1].segments == 2);
  CHECK(joined.parts[1].segment_row(1) == 3);

  // a's rows padded with its pad id 0, b's with 3; masks 0 and token types 0
  // on padding, b's missing token types 0 everywhere.
  CHECK(torch::equal(joined.tokens.input_ids,
                     torch::tensor({5, 6, 0, 0, 7, 8, 0, 0, 1, 2, 3, 3, 4, 5, 6, 7}, torch::kLong).view({4, 4})));
  CHECK(torch::equal(joined.tokens.attention_mask,
                     torch::tensor({1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1}, torch::kLong).view({4, 4})));
  CHECK(torch::equal(joined.tokens.token_type_ids,
                     torch::tensor({1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, torch::kLong).view({4, 4})));
  CHECK(joined.tokens.padded);
}

// The joint batch is unpadded (the encoder then runs without a mask) only
// when every segment is as long as the longest and none of them is padded.
TEST_CASE("join_batches says whether the joint batch holds padding", "[data][join]") {
  auto full = [](std::vector<std::vector<int64_t>> ids) {
    TokenBatch t = tokens(std::move(ids));
    t.padded = false;
    return t;
  };
  const auto a = batch("a", {full({{5, 6, 7}, {7, 8, 9}})}, 0);
  const auto b = batch("b", {full({{1, 2, 3}}), full({{4, 5, 6}})}, 3);
  CHECK_FALSE(join_batches({&a, &b}).tokens.padded);
  const auto shorter = batch("c", {full({{1, 2}})}, 0);
  CHECK(join_batches({&a, &shorter}).tokens.padded);  // the joining pads c
  const auto padded_within = batch("d", {tokens({{1, 2, 3}})}, 0);
  CHECK(join_batches({&a, &padded_within}).tokens.padded);  // d says it may hold padding
}

TEST_CASE("join_batches refuses an empty batch (an empty data-parallel shard runs alone)", "[data][join]") {
  const auto a = batch("a", {tokens({{5, 6}})}, 0);
  TaskBatch empty;
  empty.task = "b";
  CHECK_THROWS(join_batches({&a, &empty}));
}

namespace {

TaskBatch of_length(std::string task, int64_t rows, std::vector<int64_t> lengths) {
  std::vector<TokenBatch> segments;
  for (const int64_t n : lengths) segments.push_back(tokens(std::vector<std::vector<int64_t>>(rows, std::vector<int64_t>(n, 5))));
  return batch(std::move(task), std::move(segments), 0);
}

}  // namespace

TEST_CASE("group_by_length joins batches while padding adds at most the given share of tokens", "[data][join]") {
  const auto a = of_length("a", 4, {20});      // 80 tokens
  const auto b = of_length("b", 4, {21});      // 84
  const auto c = of_length("c", 2, {12, 30});  // siamese: 84 tokens, its longest 30
  const auto d = of_length("d", 4, {40});
  TaskBatch empty;
  empty.task = "e";
  const std::vector<const TaskBatch*> all{&d, &c, &b, &a, &empty};
  // In order of length a (20), b (21), c (30), d (40): b joins a (21 x 8 = 168
  // <= 1.1 x 164); c does not (30 x 12 = 360 > 1.1 x 248); d not with c.
  CHECK(group_by_length(all, 0.1) == std::vector<std::vector<size_t>>{{3, 2}, {1}, {0}});
  // With room for any padding everything joins, in order of length; with none,
  // only batches of one length.
  CHECK(group_by_length(all, std::numeric_limits<double>::infinity()) == std::vector<std::vector<size_t>>{{3, 2, 1, 0}});
  CHECK(group_by_length({&a, &a, &b}, 0.0) == std::vector<std::vector<size_t>>{{0, 1}, {2}});
}

TEST_CASE("pad_to_length adds columns of padding and says the batch is padded", "[data][join]") {
  auto in = tokens({{5, 6, 7}, {8, 9, 4}});
  in.padded = false;
  const auto same = pad_to_length(in, 3, 0);
  CHECK(same.input_ids.is_same(in.input_ids));
  CHECK_FALSE(same.padded);

  const auto out = pad_to_length(in, 5, 2);
  CHECK(torch::equal(out.input_ids, torch::tensor({5, 6, 7, 2, 2, 8, 9, 4, 2, 2}, torch::kLong).view({2, 5})));
  CHECK(torch::equal(out.attention_mask, torch::tensor({1, 1, 1, 0, 0, 1, 1, 1, 0, 0}, torch::kLong).view({2, 5})));
  CHECK(torch::equal(out.token_type_ids, torch::tensor({1, 1, 1, 0, 0, 1, 1, 1, 0, 0}, torch::kLong).view({2, 5})));
  CHECK(out.padded);
  CHECK_FALSE(pad_to_length(tokens({{5, 6}}, /*with_types=*/false), 4, 0).token_type_ids.defined());
}

TEST_CASE("pad_to_multiple rounds the length up to the multiple, within the positions", "[data][join]") {
  const auto length = [](int64_t own, int64_t multiple, int64_t positions) {
    return pad_to_multiple(tokens({std::vector<int64_t>(static_cast<size_t>(own), 5)}), multiple, positions, 0)
        .input_ids.size(1);
  };
  CHECK(length(5, 8, 16) == 8);
  CHECK(length(8, 8, 16) == 8);
  CHECK(length(9, 8, 16) == 16);
  CHECK(length(13, 32, 16) == 16);  // capped at the positions
  CHECK(length(20, 32, 16) == 20);  // longer than the positions: as it is
  CHECK(length(3, 1, 16) == 3);
}
