#pragma once
// Argument checks of mtbert::disentangled_scores shared by its CPU and CUDA
// kernels (and compiled by both the C++ compiler and nvcc).
#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>
#include <c10/util/Optional.h>

namespace mtbert::ops::detail {

// Sizes of one call: batch, heads, length, relative rows in use.
struct ScoreShape {
  int64_t batch = 0, heads = 0, length = 0, span = 0;
};

inline ScoreShape check_forward_args(const at::Tensor& content, const c10::optional<at::Tensor>& c2p,
                                     const c10::optional<at::Tensor>& p2c, const at::Tensor& rel_index,
                                     const c10::optional<at::Tensor>& bias) {
  TORCH_CHECK(content.dim() == 4 && content.size(2) == content.size(3),
              "disentangled_scores: content must be [B, H, N, N], got ", content.sizes());
  ScoreShape s{content.size(0), content.size(1), content.size(2), 0};
  for (const auto* term : {&c2p, &p2c}) {
    if (!term->has_value() || !(*term)->defined()) continue;
    const at::Tensor& t = **term;
    TORCH_CHECK(t.dim() == 4 && t.size(0) == s.batch && t.size(1) == s.heads && t.size(2) == s.length,
                "disentangled_scores: c2p/p2c must be [B, H, N, S] with B, H, N of content ", content.sizes(),
                ", got ", t.sizes());
    TORCH_CHECK(s.span == 0 || t.size(3) == s.span, "disentangled_scores: c2p and p2c differ in S");
    TORCH_CHECK(t.scalar_type() == content.scalar_type() && t.device() == content.device(),
                "disentangled_scores: c2p/p2c must have content's dtype and device");
    s.span = t.size(3);
  }
  TORCH_CHECK(rel_index.dim() == 1 && rel_index.size(0) == std::max<int64_t>(2 * s.length - 1, 0),
              "disentangled_scores: rel_index must be [2N - 1] = [", 2 * s.length - 1, "], got ", rel_index.sizes());
  TORCH_CHECK(rel_index.scalar_type() == at::kLong && rel_index.device() == content.device(),
              "disentangled_scores: rel_index must be int64 on content's device");
  if (bias.has_value() && bias->defined()) {
    TORCH_CHECK(bias->scalar_type() == content.scalar_type() && bias->device() == content.device(),
                "disentangled_scores: bias must have content's dtype and device");
    TORCH_CHECK(bias->dim() <= 4, "disentangled_scores: bias must broadcast to [B, H, N, N], got ", bias->sizes());
  }
  return s;
}

inline bool present(const c10::optional<at::Tensor>& t) { return t.has_value() && t->defined(); }

}  // namespace mtbert::ops::detail
