#include "ops/relative_plan.h"

#include <algorithm>
#include <utility>

#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>

namespace mtbert::ops {

namespace {

// The host vector as an int64 tensor on `device`.
at::Tensor on_device(const std::vector<int64_t>& values, const c10::Device& device) {
  return at::tensor(values, at::TensorOptions().dtype(at::kLong)).to(device);
}

}  // namespace

RelativePlan::RelativePlan(const at::Tensor& index, int64_t tile_rows, const c10::optional<c10::Device>& device)
    : tile_rows_(tile_rows) {
  TORCH_CHECK(index.defined() && index.dim() == 1 && index.scalar_type() == at::kLong &&
                  (index.numel() == 0 || index.numel() % 2 == 1),
              "RelativePlan: the index must be a [2N - 1] int64 table of relative rows, got ",
              index.defined() ? index.toString() : "an undefined tensor", " of shape ",
              index.defined() ? index.sizes() : at::IntArrayRef{});
  TORCH_CHECK(tile_rows >= 0, "RelativePlan: tile_rows must be >= 0 (0: no band), got ", tile_rows);
  // Ordinary tensors, also when the plan is made under InferenceMode: they
  // outlive the pass that made them, and training saves them for backward.
  c10::InferenceMode not_inference(false);
  const c10::Device where = device.value_or(index.device());
  const at::Tensor host = index.to(at::kCPU).contiguous();
  const int64_t* rows = host.data_ptr<int64_t>();
  const int64_t entries = host.numel();
  length_ = (entries + 1) / 2;
  if (entries > 0) {
    const auto [lowest, highest] = std::minmax_element(rows, rows + entries);
    TORCH_CHECK(*lowest >= 0, "RelativePlan: the index holds a negative row (", *lowest, ")");
    span_ = *highest + 1;
  }
  // A copy: the caller's tensor may be an inference tensor, or change later.
  index_ = on_device(std::vector<int64_t>(rows, rows + entries), where);

  // The backward's order: a counting sort of the distances by row (stable).
  std::vector<int64_t> offsets(span_ + 1, 0), order(entries);
  for (int64_t k = 0; k < entries; ++k) ++offsets[rows[k] + 1];
  for (int64_t r = 0; r < span_; ++r) offsets[r + 1] += offsets[r];
  std::vector<int64_t> next(offsets.begin(), offsets.end() - 1);
  for (int64_t k = 0; k < entries; ++k) order[next[rows[k]]++] = k;
  order_ = on_device(order, where);
  offsets_ = on_device(offsets, where);

  if (tile_rows_ == 0 || length_ == 0) {
    tile_rows_ = 0;
    return;
  }
  const int64_t n = length_, tiles = (n + tile_rows_ - 1) / tile_rows_;
  // Score (i, j) reads rows[i - j + n - 1]: a tile of queries [p0, p1) reads
  // the entries [p0, p1 + n - 2], a tile of keys [p0, p1) the entries
  // [n - p1, 2n - 2 - p0].
  auto window = [&](int64_t lo_entry, int64_t hi_entry) {
    const auto [lo, hi] = std::minmax_element(rows + lo_entry, rows + hi_entry + 1);
    return std::make_pair(*lo, *hi);
  };
  std::vector<std::pair<int64_t, int64_t>> c2p, p2c;
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t p0 = t * tile_rows_, p1 = std::min(n, p0 + tile_rows_);
    c2p.push_back(window(p0, p1 + n - 2));
    p2c.push_back(window(n - p1, 2 * n - 2 - p0));
    width_ = std::max({width_, c2p.back().second - c2p.back().first + 1, p2c.back().second - p2c.back().first + 1});
  }
  std::vector<int64_t> c2p_rows, p2c_rows;
  auto add = [&](const std::pair<int64_t, int64_t>& w, std::vector<int64_t>& first, std::vector<int64_t>& rows_out) {
    first.push_back(std::min(w.first, span_ - width_));
    for (int64_t r = 0; r < width_; ++r) rows_out.push_back(first.back() + r);
  };
  for (int64_t t = 0; t < tiles; ++t) {
    add(c2p[t], c2p_first_, c2p_rows);
    add(p2c[t], p2c_first_, p2c_rows);
  }
  c2p_first_tensor_ = on_device(c2p_first_, where);
  p2c_first_tensor_ = on_device(p2c_first_, where);
  c2p_rows_ = on_device(c2p_rows, where);
  p2c_rows_ = on_device(p2c_rows, where);
}

}  // namespace mtbert::ops
