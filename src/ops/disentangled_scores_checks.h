#pragma once
// Argument checks of mtbert::disentangled_scores and of its backward, shared
// by the CPU and CUDA kernels (compiled by both the C++ compiler and nvcc),
// and the views of disentangled_scores_views.h made from checked tensors. The
// plan (relative_plan.h) was validated when it was made: a call checks only
// that the tensors fit it, in time independent of the scores' size.
#include <algorithm>
#include <type_traits>

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>
#include <c10/util/Optional.h>

#include "ops/disentangled_scores_views.h"
#include "ops/relative_plan.h"

namespace mtbert::ops::detail {

using OptTensor = c10::optional<at::Tensor>;

inline bool present(const OptTensor& t) { return t.has_value() && t->defined(); }

// Batch, heads and length of the scores of one call.
struct ScoreShape {
  int64_t batch = 0, heads = 0, length = 0;
};

inline ScoreShape check_scores(const at::Tensor& scores, const char* what, const RelativePlanPtr& plan) {
  TORCH_CHECK(scores.dim() == 4 && scores.size(2) == scores.size(3), "disentangled_scores: ", what,
              " must be [B, H, N, N], got ", scores.sizes());
  TORCH_CHECK(plan, "disentangled_scores: no plan given");
  const ScoreShape s{scores.size(0), scores.size(1), scores.size(2)};
  TORCH_CHECK(plan->length() == s.length, "disentangled_scores: the plan is for sequences of ", plan->length(),
              ", the scores for ", s.length);
  TORCH_CHECK(plan->device() == scores.device(), "disentangled_scores: the plan is on ", plan->device(),
              ", the scores on ", scores.device());
  return s;
}

// An operand of the scores' own dtype and device (content's, or grad's).
inline void check_like_scores(const at::Tensor& t, const char* name, const at::Tensor& scores) {
  TORCH_CHECK(t.scalar_type() == scores.scalar_type() && t.device() == scores.device(), "disentangled_scores: ", name,
              " must have the scores' dtype and device (", scores.scalar_type(), " on ", scores.device(), "), got ",
              t.scalar_type(), " on ", t.device());
}

// A position term, or its gradient: the scores' dtype and device, and a
// layout the plan serves: full [B, H, N, S] with S at least the plan's span,
// or banded [B, H, tiles, T, W] as the plan's band.
inline void check_term(const at::Tensor& t, const char* name, const at::Tensor& scores, const ScoreShape& s,
                       const RelativePlan& plan) {
  check_like_scores(t, name, scores);
  if (t.dim() == 4) {
    TORCH_CHECK(t.size(0) == s.batch && t.size(1) == s.heads && t.size(2) == s.length && t.size(3) >= plan.span(),
                "disentangled_scores: ", name, " must be [B, H, N, S] with B, H, N of the scores and S at least the ",
                plan.span(), " rows the plan uses, got ", t.sizes());
    return;
  }
  TORCH_CHECK(t.dim() == 5, "disentangled_scores: ", name, " must be [B, H, N, S] or banded [B, H, tiles, T, W], got ",
              t.sizes());
  TORCH_CHECK(plan.banded(), "disentangled_scores: ", name,
              " is banded, but the plan has no band (make it with tile_rows > 0)");
  TORCH_CHECK(t.size(0) == s.batch && t.size(1) == s.heads && t.size(2) == plan.tiles() &&
                  t.size(3) == plan.tile_rows() && t.size(4) == plan.width(),
              "disentangled_scores: banded ", name, " must be [B, H, tiles, T, W] = [", s.batch, ", ", s.heads, ", ",
              plan.tiles(), ", ", plan.tile_rows(), ", ", plan.width(), "] (the plan's band), got ", t.sizes());
}

// p2p [H, 2N - 1], or its gradient.
inline void check_distances(const at::Tensor& t, const char* name, const at::Tensor& scores, const ScoreShape& s) {
  check_like_scores(t, name, scores);
  TORCH_CHECK(t.dim() == 2 && t.size(0) == s.heads && t.size(1) == std::max<int64_t>(2 * s.length - 1, 0),
              "disentangled_scores: ", name, " must be [H, 2N - 1] = [", s.heads, ", ", 2 * s.length - 1, "], got ",
              t.sizes());
}

inline ScoreShape check_forward_args(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                                     const RelativePlanPtr& plan, const OptTensor& bias, const OptTensor& p2p) {
  const ScoreShape s = check_scores(content, "content", plan);
  if (present(c2p)) check_term(*c2p, "c2p", content, s, *plan);
  if (present(p2c)) check_term(*p2c, "p2c", content, s, *plan);
  if (present(p2p)) check_distances(*p2p, "p2p", content, s);
  if (present(bias)) {
    check_like_scores(*bias, "bias", content);
    TORCH_CHECK(bias->dim() <= 4, "disentangled_scores: bias must broadcast to [B, H, N, N], got ", bias->sizes());
  }
  return s;
}

// The backward writes one value per slot of each gradient it is given.
inline ScoreShape check_backward_args(const at::Tensor& grad, const RelativePlanPtr& plan, const OptTensor& grad_c2p,
                                      const OptTensor& grad_p2c, const OptTensor& grad_p2p) {
  const ScoreShape s = check_scores(grad, "grad", plan);
  for (const auto& [out, name] : {std::make_pair(&grad_c2p, "grad_c2p"), std::make_pair(&grad_p2c, "grad_p2c"),
                                  std::make_pair(&grad_p2p, "grad_p2p")}) {
    if (!present(*out)) continue;
    if (out == &grad_p2p) check_distances(**out, name, grad, s);
    else check_term(**out, name, grad, s, *plan);
    TORCH_CHECK((*out)->is_non_overlapping_and_dense(), "disentangled_scores_backward: ", name,
                " must not overlap itself (one value is written per slot)");
  }
  return s;
}

// The views of the checked tensors (T: scalar_t or const scalar_t); an
// absent operand reads `zero`, a single zero of the dtype.
template <typename T>
T* data_of(const at::Tensor& t) {
  return static_cast<T*>(t.data_ptr<std::remove_const_t<T>>());
}

inline ScoreStrides score_strides(const OptTensor& t, at::IntArrayRef expand_to = {}) {
  if (!present(t)) return {};
  const at::Tensor v = expand_to.empty() ? *t : t->expand(expand_to);
  return {v.stride(0), v.stride(1), v.stride(2), v.stride(3)};
}

// `by_query`: c2p (its rows are query rows, its windows c2p_first), else p2c.
template <typename T>
TermView<T> term_view(const OptTensor& term, const RelativePlan& plan, bool by_query, T* zero) {
  TermView<T> v;
  const int64_t n = plan.length();
  v.data = zero;
  v.tile_rows = std::max<int64_t>(n, 1);
  v.rows = n;
  if (!present(term)) return v;
  const at::Tensor& t = *term;
  v.data = data_of<T>(t);
  v.batch_stride = t.stride(0);
  v.head_stride = t.stride(1);
  v.column_stride = t.stride(t.dim() - 1);
  v.width = t.size(t.dim() - 1);
  if (t.dim() == 4) {
    v.row_stride = t.stride(2);
  } else {
    v.tile_rows = t.size(3);
    v.tile_stride = t.stride(2);
    v.row_stride = t.stride(3);
    v.rows = t.size(2) * t.size(3);
    v.first = (by_query ? plan.c2p_first_tensor() : plan.p2c_first_tensor()).data_ptr<int64_t>();
  }
  return v;
}

template <typename T>
DistanceView<T> distance_view(const OptTensor& p2p, T* zero) {
  if (!present(p2p)) return {zero, 0, 0};
  return {data_of<T>(*p2p), p2p->stride(0), p2p->stride(1)};
}

}  // namespace mtbert::ops::detail
