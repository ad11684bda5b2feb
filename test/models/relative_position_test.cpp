// DeBERTa's relative positions: the log buckets against values worked out by
// hand from the published formula, and the per-length tables the model uses.
#include <torch/torch.h>

#include "models/relative_position.h"
#include "support/test_support.h"

using namespace mtbert;

TEST_CASE("log buckets match values computed by hand", "[models][relpos]") {
  // DeBERTa-v3: 256 buckets, max_relative_positions 512: mid = 128 and
  // log((512 - 1) / 128) = 1.3843619. E.g. d = 200: ln(200 / 128) = 0.4462871,
  // 0.4462871 / 1.3843619 * 127 = 40.94 -> ceil 41 -> 128 + 41 = 169.
  //   d = 129: ln(1.0078125) / 1.3843619 * 127 = 0.714 -> 1 -> 129
  //   d = 300: ln(2.34375) / 1.3843619 * 127 = 78.14 -> 79 -> 207
  //   d = 511: exactly 127 -> 255;   d = 1000: 188.59 -> 189 -> 317
  const std::vector<std::pair<int64_t, int64_t>> v3 = {{0, 0},       {5, 5},       {-5, -5},     {127, 127},
                                                        {128, 128},   {-128, -128}, {129, 129},   {200, 169},
                                                        {-200, -169}, {300, 207},   {511, 255},   {-511, -255},
                                                        {1000, 317}};
  // A tiny one: 8 buckets, max 20: mid 4, log(19 / 4) = 1.5581446; d = 5:
  // ln(1.25) / 1.5581446 * 3 = 0.43 -> 1 -> 5; d = 9: ln(2.25) * 3 / 1.558 = 1.56 -> 2 -> 6;
  // d = 11: ln(2.75) * 3 / 1.558 = 1.95 -> 2 -> 6; d = 19: 3 -> 7.
  const std::vector<std::pair<int64_t, int64_t>> tiny = {{3, 3}, {4, 4}, {5, 5}, {9, 6}, {-11, -6}, {19, 7}};
  for (const auto& [cases, buckets, max_position] :
       {std::make_tuple(v3, int64_t{256}, int64_t{512}), std::make_tuple(tiny, int64_t{8}, int64_t{20})}) {
    std::vector<int64_t> distances, expected;
    for (const auto& [d, bucket] : cases) {
      distances.push_back(d);
      expected.push_back(bucket);
    }
    auto got = log_bucket_position(torch::tensor(distances, torch::kLong), buckets, max_position);
    CHECK(got.scalar_type() == torch::kLong);
    for (size_t k = 0; k < distances.size(); ++k) {
      INFO("distance " << distances[k] << " buckets " << buckets);
      CHECK(got[k].item<int64_t>() == expected[k]);
    }
  }
}

namespace {

// Disentangled attention (c2p and p2c) with `max_position` absolute positions.
ModelConfig relative_config(int64_t max_position) {
  ModelConfig c;
  c.model_type = "deberta-v2";
  c.relative_attention = true;
  c.pos_att_type = {"c2p", "p2c"};
  c.max_position_embeddings = max_position;
  return c;
}

}  // namespace

TEST_CASE("relative position tables are the used rows of clamp(bucket(i - j) + k)", "[models][relpos]") {
  ModelConfig c = relative_config(64);

  SECTION("N < k: no clamping, 2N - 1 rows from k - (N - 1)") {
    c.max_relative_positions = 10;
    RelativePositionCache cache(c);
    auto p = cache.get(4, torch::kCPU);
    CHECK(p.first == 10 - 3);
    CHECK(p.span == 7);
    // Distances -3..3 -> rows 7..13 -> shifted 0..6.
    CHECK(torch::equal(p.plan->index(), torch::arange(7, torch::kLong)));
  }
  SECTION("N > k: distances beyond k share the end rows") {
    c.max_relative_positions = 3;
    RelativePositionCache cache(c);
    auto p = cache.get(6, torch::kCPU);
    CHECK(p.first == 0);
    CHECK(p.span == 6);
    // Distances -5..5 -> clamp(d + 3, 0, 5).
    CHECK(torch::equal(p.plan->index(), torch::tensor({0, 0, 0, 1, 2, 3, 4, 5, 5, 5, 5}, torch::kLong)));
  }
  SECTION("log buckets") {
    c.position_buckets = 8;
    c.max_relative_positions = 20;
    RelativePositionCache cache(c);
    auto p = cache.get(12, torch::kCPU);
    // Distances -11..11 bucket to -6..6 (see the hand values above), rows 8 + b.
    CHECK(p.first == 2);
    CHECK(p.span == 13);
    CHECK(p.plan->index()[0].item<int64_t>() == 0);                    // d = -11 -> -6
    CHECK(p.plan->index()[11].item<int64_t>() == 6);                   // d = 0
    CHECK(p.plan->index()[11 + 5].item<int64_t>() == 6 + 5);           // d = 5 -> 5
    CHECK(p.plan->index()[11 + 9].item<int64_t>() == 6 + 6);           // d = 9 -> 6
  }
  SECTION("an empty sequence") {
    RelativePositionCache cache(c);
    auto p = cache.get(0, torch::kCPU);
    CHECK(p.plan->index().numel() == 0);
    CHECK(p.span == 0);
  }
  SECTION("built once per length and device") {
    c.max_relative_positions = 8;
    RelativePositionCache cache(c);
    auto a = cache.get(5, torch::kCPU), b = cache.get(5, torch::kCPU), other = cache.get(6, torch::kCPU);
    CHECK(a.plan.get() == b.plan.get());
    CHECK(other.plan->index().size(0) == 11);
  }
}

TEST_CASE("the band of the position GEMMs: each tile's window, worked out by hand", "[models][relpos]") {
  // N = 6, clamped at k = 3: rows of distances -5..5 are 0 0 0 1 2 3 4 5 5 5 5.
  auto index = torch::tensor({0, 0, 0, 1, 2, 3, 4, 5, 5, 5, 5}, torch::kLong);
  const auto band = ops::make_relative_plan(index, 4);
  CHECK(band->tile_rows() == 4);
  // Queries 0-3 read entries 0..8 (rows 0..5), queries 4-5 entries 4..9 (rows
  // 2..5); keys 0-3 entries 2..10 (rows 0..5), keys 4-5 entries 0..6 (rows 0..4).
  CHECK(band->width() == 6);
  CHECK(band->c2p_first() == std::vector<int64_t>{0, 0});
  CHECK(band->p2c_first() == std::vector<int64_t>{0, 0});
  // At N = 128 unclamped (k = 256) a tile of 32 rows needs 32 + 127 = 159 of
  // the 255 rows, its window 32 rows further along per tile.
  auto wide = torch::arange(255, torch::kLong);
  const auto b = ops::make_relative_plan(wide, 32);
  CHECK(b->width() == 159);
  CHECK(b->c2p_first() == std::vector<int64_t>{0, 32, 64, 96});
  CHECK(b->p2c_first() == std::vector<int64_t>{96, 64, 32, 0});
  CHECK(torch::equal(b->c2p_rows().narrow(0, 159, 159), torch::arange(32, 191, torch::kLong)));
}

TEST_CASE("relative positions first built under InferenceMode serve training", "[models][relpos]") {
  ModelConfig c = relative_config(64);
  RelativePositionCache cache(c);
  {
    c10::InferenceMode inference;
    cache.get(70, torch::kCPU);
  }
  const auto p = cache.get(70, torch::kCPU);
  CHECK_FALSE(p.plan->index().is_inference());
  CHECK_FALSE(p.plan->c2p_rows().is_inference());
  // A gather that autograd records saves the index.
  auto table = torch::randn({p.span, 4}, torch::requires_grad());
  table.index_select(0, p.plan->index()).sum().backward();
  CHECK(table.grad().sum().item<double>() == Approx(139.0 * 4));
}

TEST_CASE("the model bands its position GEMMs only where the windows are narrow", "[models][relpos]") {
  ModelConfig c = relative_config(512);
  c.max_relative_positions = 512;
  // DeBERTa-v3's log buckets: at N = 128 a window is 159 of 255 rows; at
  // N = 256, 276 of 385 (the buckets compress the far distances).
  c.position_buckets = 256;
  RelativePositionCache buckets(c);
  CHECK(buckets.get(128, torch::kCPU).plan->width() == 159);
  CHECK(buckets.get(256, torch::kCPU).plan->tile_rows() == 0);
  CHECK(buckets.get(32, torch::kCPU).plan->tile_rows() == 0);  // a single tile
  // Clamped distances: windows of 32 + N - 1 of 2N - 1 rows.
  c.position_buckets = -1;
  RelativePositionCache clamped(c);
  CHECK(clamped.get(256, torch::kCPU).plan->width() == 287);
  CHECK(clamped.get(512, torch::kCPU).plan->width() == 543);
  clamped.set_banded(false);
  CHECK(clamped.get(512, torch::kCPU).plan->tile_rows() == 0);
}
