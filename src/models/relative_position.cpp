#include "models/relative_position.h"

#include <cmath>

#include <c10/core/InferenceMode.h>
#include <torch/torch.h>

namespace mtbert {

torch::Tensor log_bucket_position(const torch::Tensor& distance, int64_t bucket_size, int64_t max_position) {
  const auto d = distance.to(torch::kDouble);
  const double mid = static_cast<double>(bucket_size / 2);
  const auto magnitude = d.abs();
  // Inside (-mid, mid) the log term is unused; mid - 1 keeps its argument
  // positive, as the published code does.
  const auto clipped = torch::where(magnitude < mid, torch::full_like(magnitude, mid - 1), magnitude);
  const auto log_position =
      torch::ceil(torch::log(clipped / mid) / std::log((max_position - 1) / mid) * (mid - 1)) + mid;
  return torch::where(magnitude <= mid, d, log_position * d.sign()).to(torch::kLong);
}

RelativePositionCache::RelativePositionCache(const ModelConfig& c)
    : span_(c.relative_span()), buckets_(c.position_buckets), max_position_(c.effective_max_relative_positions()) {}

void RelativePositionCache::set_banded(bool banded) {
  std::lock_guard<std::mutex> lock(mutex_);
  banded_ = banded;
  entries_.clear();
}

RelativePositions RelativePositionCache::get(int64_t length, const torch::Device& device) {
  const auto key = std::make_tuple(length, static_cast<int>(device.type()), static_cast<int>(device.index()));
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = entries_.find(key); it != entries_.end()) return it->second;

  // Kept for later passes, training ones included: ordinary tensors even when
  // the first pass at this length is an evaluation under InferenceMode.
  c10::InferenceMode not_inference(false);
  RelativePositions entry;
  auto rows = torch::empty({0}, torch::kLong);
  if (length > 0) {
    // Distances i - j from -(N-1) to N-1, as row(i, j) needs them.
    auto distance = torch::arange(-(length - 1), length, torch::kLong);
    if (buckets_ > 0) distance = log_bucket_position(distance, buckets_, max_position_);
    rows = torch::clamp(distance + span_, 0, 2 * span_ - 1);
    entry.first = rows.min().item<int64_t>();
    entry.span = rows.max().item<int64_t>() - entry.first + 1;
  }
  // Built on the host; the plan reads it there and puts its tables on the device.
  const auto index = rows - entry.first;
  if (banded_ && length >= 2 * kBandTileRows) {
    entry.plan = ops::make_relative_plan(index, kBandTileRows, device);
    if (static_cast<double>(entry.plan->width()) > kBandMaxWidthShare * static_cast<double>(entry.span))
      entry.plan.reset();  // the band would not pay
  }
  if (!entry.plan) entry.plan = ops::make_relative_plan(index, 0, device);
  entries_.emplace(key, entry);
  return entry;
}

}  // namespace mtbert
