#include "models/relative_position.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

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

RelativeBand relative_band(const torch::Tensor& index, int64_t tile_rows, const torch::Device& device) {
  const auto table = index.to(torch::kCPU).contiguous();
  const int64_t* rows = table.data_ptr<int64_t>();
  const int64_t n = (table.numel() + 1) / 2, span = table.numel() == 0 ? 0 : table.max().item<int64_t>() + 1;
  const int64_t tiles = (n + tile_rows - 1) / tile_rows;
  // Row (i, j) is rows[i - j + n - 1]: a tile of queries [p0, p1) reads the
  // entries [p0, p1 + n - 2], a tile of keys [p0, p1) the entries [n - p1, 2n - 2 - p0].
  auto window = [&](int64_t lo_entry, int64_t hi_entry) {
    const auto [lo, hi] = std::minmax_element(rows + lo_entry, rows + hi_entry + 1);
    return std::make_pair(*lo, *hi);
  };
  std::vector<std::pair<int64_t, int64_t>> c2p, p2c;
  RelativeBand band;
  band.tile_rows = tile_rows;
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t p0 = t * tile_rows, p1 = std::min(n, p0 + tile_rows);
    c2p.push_back(window(p0, p1 + n - 2));
    p2c.push_back(window(n - p1, 2 * n - 2 - p0));
    band.width = std::max({band.width, c2p.back().second - c2p.back().first + 1,
                           p2c.back().second - p2c.back().first + 1});
  }
  std::vector<int64_t> c2p_rows, p2c_rows;
  auto add = [&](const std::pair<int64_t, int64_t>& w, std::vector<int64_t>& first, std::vector<int64_t>& rows_out) {
    first.push_back(std::min(w.first, span - band.width));
    for (int64_t r = 0; r < band.width; ++r) rows_out.push_back(first.back() + r);
  };
  for (int64_t t = 0; t < tiles; ++t) {
    add(c2p[t], band.c2p_first, c2p_rows);
    add(p2c[t], band.p2c_first, p2c_rows);
  }
  const auto options = torch::TensorOptions().dtype(torch::kLong);
  band.c2p_rows = torch::tensor(c2p_rows, options).to(device);
  band.p2c_rows = torch::tensor(p2c_rows, options).to(device);
  return band;
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

  RelativePositions entry;
  const auto options = torch::TensorOptions().dtype(torch::kLong).device(device);
  if (length == 0) {
    entry.index = torch::empty({0}, options);
  } else {
    // Distances i - j from -(N-1) to N-1, on the device: no host round trip
    // per forward pass, and none per layer.
    auto distance = torch::arange(-(length - 1), length, options);
    if (buckets_ > 0) distance = log_bucket_position(distance, buckets_, max_position_);
    auto rows = torch::clamp(distance + span_, 0, 2 * span_ - 1);
    // One device-to-host read per new length, never per step.
    entry.first = rows.min().item<int64_t>();
    entry.span = rows.max().item<int64_t>() - entry.first + 1;
    entry.index = rows - entry.first;
    if (banded_ && length >= 2 * kBandTileRows) {
      RelativeBand band = relative_band(entry.index, kBandTileRows, device);
      if (static_cast<double>(band.width) <= kBandMaxWidthShare * static_cast<double>(entry.span))
        entry.band = std::move(band);
    }
  }
  entries_.emplace(key, entry);
  return entry;
}

}  // namespace mtbert
