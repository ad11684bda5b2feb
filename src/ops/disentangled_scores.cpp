// The schema of mtbert::disentangled_scores, its autograd, and the C++ entry
// point the model calls. The TORCH_LIBRARY block lives here, next to that
// entry point, so that linking the entry point always links the schema too;
// the CPU and CUDA kernels register themselves from their own files.
#include "ops/disentangled_scores.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/custom_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include "ops/disentangled_scores_checks.h"

namespace mtbert::ops {

namespace {

using OptTensor = c10::optional<at::Tensor>;
using ForwardSignature = at::Tensor(const at::Tensor&, const OptTensor&, const OptTensor&, const at::Tensor&, double,
                                    const OptTensor&, at::IntArrayRef, at::IntArrayRef, const OptTensor&);
using BackwardSignature = void(const at::Tensor&, const at::Tensor&, double, const OptTensor&, at::IntArrayRef,
                               const OptTensor&, at::IntArrayRef, const OptTensor&);

at::Tensor dispatch_forward(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                            const at::Tensor& rel_index, double scale, const OptTensor& bias,
                            at::IntArrayRef c2p_first, at::IntArrayRef p2c_first, const OptTensor& p2p) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("mtbert::disentangled_scores", "")
                             .typed<ForwardSignature>();
  return op.call(content, c2p, p2c, rel_index, scale, bias, c2p_first, p2c_first, p2p);
}

void dispatch_backward(const at::Tensor& grad, const at::Tensor& rel_index, double scale, const OptTensor& grad_c2p,
                       at::IntArrayRef c2p_first, const OptTensor& grad_p2c, at::IntArrayRef p2c_first,
                       const OptTensor& grad_p2p) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("mtbert::disentangled_scores_backward", "")
                             .typed<BackwardSignature>();
  op.call(grad, rel_index, scale, grad_c2p, c2p_first, grad_p2c, p2c_first, grad_p2p);
}

// What backward needs of a position term: whether it was given, and the
// layout its gradient takes. The gradient copies the term's strides when they
// are dense, so that a banded term viewed from a GEMM's output gets its
// gradient in that GEMM's layout (no copy on the way back).
void save_term(torch::autograd::AutogradContext* ctx, const std::string& name, const OptTensor& term,
               at::IntArrayRef first, int64_t& edge) {
  ctx->saved_data[name + "_edge"] = detail::present(term) ? edge++ : int64_t{-1};
  if (!detail::present(term)) return;
  ctx->saved_data[name + "_sizes"] = term->sizes().vec();
  std::vector<int64_t> strides = term->strides().vec();
  if (!term->is_non_overlapping_and_dense()) {  // e.g. an expanded view: a contiguous gradient
    int64_t stride = 1;
    for (int64_t d = term->dim() - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= std::max<int64_t>(term->size(d), 1);
    }
  }
  ctx->saved_data[name + "_strides"] = strides;
  ctx->saved_data[name + "_first"] = first.vec();
}

class DisentangledScoresFunction : public torch::autograd::Function<DisentangledScoresFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& content, const OptTensor& c2p,
                            const OptTensor& p2c, const at::Tensor& rel_index, double scale, const OptTensor& bias,
                            at::IntArrayRef c2p_first, at::IntArrayRef p2c_first, const OptTensor& p2p) {
    detail::check_forward_args(content, c2p, p2c, rel_index, bias, p2p);
    ctx->save_for_backward({rel_index});
    ctx->saved_data["scale"] = scale;
    // needs_input_grad counts the tensor arguments actually given: absent
    // optionals have no edge.
    int64_t edge = 1;  // content is edge 0
    save_term(ctx, "c2p", c2p, c2p_first, edge);
    save_term(ctx, "p2c", p2c, p2c_first, edge);
    ++edge;  // rel_index
    ctx->saved_data["bias_edge"] = detail::present(bias) ? edge : int64_t{-1};
    ctx->saved_data["bias_sizes"] = detail::present(bias) ? bias->sizes().vec() : std::vector<int64_t>{};
    if (detail::present(bias)) ++edge;
    ctx->saved_data["p2p_edge"] = detail::present(p2p) ? edge : int64_t{-1};
    ctx->saved_data["p2p_sizes"] = detail::present(p2p) ? p2p->sizes().vec() : std::vector<int64_t>{};
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    return dispatch_forward(content, c2p, p2c, rel_index, scale, bias, c2p_first, p2c_first, p2p);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor& grad = grads[0];
    const at::Tensor rel_index = ctx->get_saved_variables()[0];
    auto wanted = [&](const std::string& name) {
      const int64_t index = ctx->saved_data[name + "_edge"].toInt();
      return index >= 0 && ctx->needs_input_grad(static_cast<size_t>(index));
    };
    // Each wanted term's gradient in its saved layout, filled by the kernel.
    auto allocate = [&](const std::string& name) {
      if (!wanted(name)) return at::Tensor();
      return at::empty_strided(ctx->saved_data[name + "_sizes"].toIntVector(),
                               ctx->saved_data[name + "_strides"].toIntVector(), grad.options());
    };
    auto first = [&](const std::string& name, const at::Tensor& term) {
      return term.defined() ? ctx->saved_data[name + "_first"].toIntVector() : std::vector<int64_t>{};
    };
    at::Tensor grad_c2p = allocate("c2p"), grad_p2c = allocate("p2c");
    // p2p's gradient is [H, 2N - 1]: small, so always contiguous.
    at::Tensor grad_p2p;
    if (wanted("p2p")) grad_p2p = at::empty(ctx->saved_data["p2p_sizes"].toIntVector(), grad.options());
    if (grad_c2p.defined() || grad_p2c.defined() || grad_p2p.defined())
      dispatch_backward(grad, rel_index, ctx->saved_data["scale"].toDouble(), grad_c2p, first("c2p", grad_c2p),
                        grad_p2c, first("p2c", grad_p2c), grad_p2p);
    at::Tensor grad_bias;
    if (wanted("bias")) grad_bias = at::sum_to(grad, ctx->saved_data["bias_sizes"].toIntVector());
    return {grad, grad_c2p, grad_p2c, at::Tensor(), at::Tensor(), grad_bias, at::Tensor(), at::Tensor(), grad_p2p};
  }
};

at::Tensor autograd_forward(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                            const at::Tensor& rel_index, double scale, const OptTensor& bias,
                            at::IntArrayRef c2p_first, at::IntArrayRef p2c_first, const OptTensor& p2p) {
  return DisentangledScoresFunction::apply(content, c2p, p2c, rel_index, scale, bias, c2p_first, p2c_first, p2p);
}

// Under autocast (CPU or CUDA) content comes from a matrix product that
// autocast ran in bf16 (or fp16), while the padding bias, made from the
// float32 embeddings, stays float32: the op then runs in content's dtype. The
// position terms are cast to it, and the bias is first clamped to that dtype's
// finite range, so that a float32 mask of its lowest value becomes the
// dtype's lowest value (as the op's contract says), not -inf.
at::Tensor autocast_forward(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                            const at::Tensor& rel_index, double scale, const OptTensor& bias,
                            at::IntArrayRef c2p_first, at::IntArrayRef p2c_first, const OptTensor& p2p) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  const at::ScalarType dtype = content.scalar_type();
  auto in_dtype = [&](const OptTensor& t) -> OptTensor {
    if (!detail::present(t) || t->scalar_type() == dtype) return t;
    return t->to(dtype);
  };
  OptTensor saturated_bias = bias;
  if (detail::present(bias) && bias->scalar_type() != dtype) {
    double lowest = 0, highest = 0;
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "disentangled_scores_autocast", [&] {
      lowest = static_cast<double>(std::numeric_limits<scalar_t>::lowest());
      highest = static_cast<double>(std::numeric_limits<scalar_t>::max());
    });
    saturated_bias = bias->clamp(lowest, highest).to(dtype);
  }
  return dispatch_forward(content, in_dtype(c2p), in_dtype(p2c), rel_index, scale, saturated_bias, c2p_first,
                          p2c_first, in_dtype(p2p));
}

}  // namespace

at::Tensor disentangled_scores(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                               const at::Tensor& rel_index, double scale, const OptTensor& bias,
                               at::IntArrayRef c2p_first, at::IntArrayRef p2c_first, const OptTensor& p2p) {
  return dispatch_forward(content, c2p, p2c, rel_index, scale, bias, c2p_first, p2c_first, p2p);
}

}  // namespace mtbert::ops

TORCH_LIBRARY(mtbert, m) {
  m.def(
      "disentangled_scores(Tensor content, Tensor? c2p, Tensor? p2c, Tensor rel_index, float scale, "
      "Tensor? bias=None, int[] c2p_first=[], int[] p2c_first=[], Tensor? p2p=None) -> Tensor");
  // Writes the gradients of c2p, p2c and p2p into the tensors given (in the
  // terms' layouts; absent where not wanted).
  m.def(
      "disentangled_scores_backward(Tensor grad, Tensor rel_index, float scale, Tensor(a!)? grad_c2p, "
      "int[] c2p_first, Tensor(b!)? grad_p2c, int[] p2c_first, Tensor(c!)? grad_p2p=None) -> ()");
}

TORCH_LIBRARY_IMPL(mtbert, Autograd, m) { m.impl("disentangled_scores", &mtbert::ops::autograd_forward); }
TORCH_LIBRARY_IMPL(mtbert, AutocastCPU, m) { m.impl("disentangled_scores", &mtbert::ops::autocast_forward); }
TORCH_LIBRARY_IMPL(mtbert, AutocastCUDA, m) { m.impl("disentangled_scores", &mtbert::ops::autocast_forward); }
