#pragma once
// The relative-position plan of mtbert::disentangled_scores for one sequence
// length: everything the op needs besides the scores' own tensors, worked out
// and validated once, when the plan is made, so that the op keeps no state
// between calls, copies nothing per call and checks only shapes.
//
//   index [2N - 1] (int64): entry i - j + N - 1 holds the relative row r(i, j)
//         of score (i, j); rows are >= 0, and span = max + 1 rows are in use.
//   band (tile_rows > 0): the windows of the banded position GEMMs. Tile t of
//         query rows (c2p) or key rows (p2c) [t * T, (t + 1) * T) reads the
//         `width` relative rows from c2p_first[t] (p2c_first[t]): the
//         smallest block holding every row its scores use, all of the widest
//         one's width, moved down where it would pass the last row in use.
//         c2p_rows / p2c_rows [tiles * width] list each window's rows, to
//         gather the projected relative embeddings tile by tile.
//   order [2N - 1], offsets [span + 1]: the distances of each relative row
//         (order[offsets[r] .. offsets[r + 1]) are the distance entries whose
//         row is r, in increasing order), the CUDA backward's summation order.
//
// The tensors live on the index's device; on the host side the plan also
// keeps the windows' first rows. A plan is immutable once made, and its
// tensors are ordinary tensors even when it is made under InferenceMode, so a
// plan built during evaluation serves training later (autograd saves them).
//
// Registered as the TorchScript class torch.classes.mtbert.RelativePlan, so
// that Python callers of torch.ops.mtbert.disentangled_scores make plans too.
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>
#include <c10/util/Optional.h>
#include <c10/util/intrusive_ptr.h>

namespace mtbert::ops {

class RelativePlan : public torch::CustomClassHolder {
 public:
  // `index` as above, on any device (read to the host once); tile_rows 0: no
  // band; the plan's tensors go to `device` (default: the index's). Throws
  // c10::Error when the index is not a [2N - 1] int64 table of rows >= 0 or
  // tile_rows is negative.
  RelativePlan(const at::Tensor& index, int64_t tile_rows,
               const c10::optional<c10::Device>& device = c10::nullopt);

  int64_t length() const { return length_; }
  int64_t span() const { return span_; }
  c10::Device device() const { return index_.device(); }
  const at::Tensor& index() const { return index_; }

  bool banded() const { return tile_rows_ > 0; }
  int64_t tile_rows() const { return tile_rows_; }
  int64_t tiles() const { return static_cast<int64_t>(c2p_first_.size()); }
  int64_t width() const { return width_; }
  // Per tile, on the host and (as int64 tensors) on the plan's device.
  const std::vector<int64_t>& c2p_first() const { return c2p_first_; }
  const std::vector<int64_t>& p2c_first() const { return p2c_first_; }
  const at::Tensor& c2p_first_tensor() const { return c2p_first_tensor_; }
  const at::Tensor& p2c_first_tensor() const { return p2c_first_tensor_; }
  const at::Tensor& c2p_rows() const { return c2p_rows_; }
  const at::Tensor& p2c_rows() const { return p2c_rows_; }

  const at::Tensor& order() const { return order_; }
  const at::Tensor& offsets() const { return offsets_; }

 private:
  int64_t length_ = 0, span_ = 0, tile_rows_ = 0, width_ = 0;
  at::Tensor index_;
  std::vector<int64_t> c2p_first_, p2c_first_;
  at::Tensor c2p_first_tensor_, p2c_first_tensor_, c2p_rows_, p2c_rows_;
  at::Tensor order_, offsets_;
};

using RelativePlanPtr = c10::intrusive_ptr<RelativePlan>;

inline RelativePlanPtr make_relative_plan(const at::Tensor& index, int64_t tile_rows = 0,
                                          const c10::optional<c10::Device>& device = c10::nullopt) {
  return c10::make_intrusive<RelativePlan>(index, tile_rows, device);
}

}  // namespace mtbert::ops
