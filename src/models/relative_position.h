#pragma once
// DeBERTa's relative positions: the distance of query i to key j, i - j,
// optionally log-bucketed (DeBERTa-v2/v3), shifted by k and clamped into the
// 2k rows of the relative embedding table:
//
//   row(i, j) = clamp(bucket(i - j) + k, 0, 2k - 1)
//
// Since row(i, j) depends on i - j only, a sequence of length N needs the rows
// of the 2N - 1 distances -(N-1)..N-1 only; and since it is monotone in i - j,
// those rows form one contiguous block [first, first + span) of the table,
// with span <= 2N - 1. The model projects only that block (for N much below
// k, most of the table is never used).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include <torch/types.h>

#include "models/model_config.h"
#include "ops/relative_plan.h"

namespace mtbert {

// DeBERTa-v2's log buckets of integer distances (any integer tensor, any
// device), computed in double from the published formula (microsoft/DeBERTa,
// HF `make_log_bucket_position`):
//   mid = bucket_size / 2
//   |d| <= mid: d itself
//   else: sign(d) * (mid + ceil(log(|d| / mid) / log((max_position - 1) / mid) * (mid - 1)))
// Returns int64.
torch::Tensor log_bucket_position(const torch::Tensor& distance, int64_t bucket_size, int64_t max_position);

struct RelativePositions {
  // The op's plan (ops/relative_plan.h), on the model's device: its index
  // [2N - 1] holds row(i, j) - first for entry i - j + N - 1, and it carries
  // the band of the banded position GEMMs where they pay at this length.
  ops::RelativePlanPtr plan;
  int64_t first = 0;  // first row of the relative embedding table in use
  int64_t span = 0;   // rows in use
};

// The banded position GEMMs: tiles of kBandTileRows rows, used where each
// tile's window is at most kBandMaxWidthShare of the rows in use (below that
// the smaller GEMMs save more than the band's copies cost; measured in
// BENCHMARKS.md, "Banded position GEMMs"): at N = 128, 159 of 255 rows; with
// log buckets the windows of longer sequences cover most of the table.
constexpr int64_t kBandTileRows = 32;
constexpr double kBandMaxWidthShare = 0.65;

// The positions above for the sequence lengths a model meets, built once per
// (length, device) on that device and kept; never inference tensors, so that
// positions first built during evaluation serve training too. Safe to share
// between threads.
class RelativePositionCache {
 public:
  explicit RelativePositionCache(const ModelConfig& config);
  RelativePositions get(int64_t length, const torch::Device& device);
  // Whether to band where it pays (the default) or never (drops the plans
  // built). For benchmarks of the band itself.
  void set_banded(bool banded);

 private:
  int64_t span_;           // k
  int64_t buckets_;        // <= 0: no bucketing
  int64_t max_position_;   // for the bucket formula
  bool banded_ = true;
  std::mutex mutex_;
  std::map<std::tuple<int64_t, int, int>, RelativePositions> entries_;
};

}  // namespace mtbert
