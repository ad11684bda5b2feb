// The schema of mtbert::disentangled_scores, its plan class, its autograd and
// autocast kernels, the registration of every kernel, and the C++ entry point
// the model calls. Everything is registered from this one translation unit:
// the kernels' signatures name the plan class, whose type must be registered
// before them (static initialisers of one file run in order), and linking the
// entry point links the whole op.
#include "ops/disentangled_scores.h"

#include <limits>
#include <string>
#include <vector>

#include <ATen/Dispatch.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include "ops/disentangled_scores_backends.h"
#include "ops/disentangled_scores_checks.h"

namespace mtbert::ops {

namespace {

using detail::OptTensor;
using detail::present;
using ForwardSignature = at::Tensor(const at::Tensor&, const OptTensor&, const OptTensor&, const RelativePlanPtr&,
                                    double, const OptTensor&, const OptTensor&);
using BackwardSignature = void(const at::Tensor&, const RelativePlanPtr&, double, const OptTensor&, const OptTensor&,
                               const OptTensor&);

at::Tensor dispatch_forward(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                            const RelativePlanPtr& plan, double scale, const OptTensor& bias, const OptTensor& p2p) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("mtbert::disentangled_scores", "")
                             .typed<ForwardSignature>();
  return op.call(content, c2p, p2c, plan, scale, bias, p2p);
}

void dispatch_backward(const at::Tensor& grad, const RelativePlanPtr& plan, double scale, const OptTensor& grad_c2p,
                       const OptTensor& grad_p2c, const OptTensor& grad_p2p) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("mtbert::disentangled_scores_backward", "")
                             .typed<BackwardSignature>();
  op.call(grad, plan, scale, grad_c2p, grad_p2c, grad_p2p);
}

// What backward needs of a position term: whether it was given, and the
// layout its gradient takes. The gradient copies the term's strides when they
// are dense, so that a banded term viewed from a GEMM's output gets its
// gradient in that GEMM's layout (no copy on the way back).
void save_term(torch::autograd::AutogradContext* ctx, const std::string& name, const OptTensor& term, int64_t& edge) {
  ctx->saved_data[name + "_edge"] = present(term) ? edge++ : int64_t{-1};
  if (!present(term)) return;
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
}

class DisentangledScoresFunction : public torch::autograd::Function<DisentangledScoresFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& content, const OptTensor& c2p,
                            const OptTensor& p2c, const RelativePlanPtr& plan, double scale, const OptTensor& bias,
                            const OptTensor& p2p) {
    detail::check_forward_args(content, c2p, p2c, plan, bias, p2p);
    ctx->saved_data["plan"] = plan;
    ctx->saved_data["scale"] = scale;
    // needs_input_grad counts the tensor arguments actually given: absent
    // optionals have no edge.
    int64_t edge = 1;  // content is edge 0
    save_term(ctx, "c2p", c2p, edge);
    save_term(ctx, "p2c", p2c, edge);
    ctx->saved_data["bias_edge"] = present(bias) ? edge : int64_t{-1};
    ctx->saved_data["bias_sizes"] = present(bias) ? bias->sizes().vec() : std::vector<int64_t>{};
    if (present(bias)) ++edge;
    ctx->saved_data["p2p_edge"] = present(p2p) ? edge : int64_t{-1};
    ctx->saved_data["p2p_sizes"] = present(p2p) ? p2p->sizes().vec() : std::vector<int64_t>{};
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    return dispatch_forward(content, c2p, p2c, plan, scale, bias, p2p);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor& grad = grads[0];
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
    at::Tensor grad_c2p = allocate("c2p"), grad_p2c = allocate("p2c");
    // p2p's gradient is [H, 2N - 1]: small, so always contiguous.
    at::Tensor grad_p2p;
    if (wanted("p2p")) grad_p2p = at::empty(ctx->saved_data["p2p_sizes"].toIntVector(), grad.options());
    if (grad_c2p.defined() || grad_p2c.defined() || grad_p2p.defined())
      dispatch_backward(grad, ctx->saved_data["plan"].toCustomClass<RelativePlan>(),
                        ctx->saved_data["scale"].toDouble(), grad_c2p, grad_p2c, grad_p2p);
    at::Tensor grad_bias;
    if (wanted("bias")) grad_bias = at::sum_to(grad, ctx->saved_data["bias_sizes"].toIntVector());
    return {grad, grad_c2p, grad_p2c, at::Tensor(), at::Tensor(), grad_bias, grad_p2p};
  }
};

at::Tensor autograd_forward(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                            const RelativePlanPtr& plan, double scale, const OptTensor& bias, const OptTensor& p2p) {
  return DisentangledScoresFunction::apply(content, c2p, p2c, plan, scale, bias, p2p);
}

// The backward's kernels build no graph: asked for one (create_graph through
// the position terms, a grad that requires grad), the op says so instead of
// returning gradients that silently have none.
void autograd_backward(const at::Tensor& grad, const RelativePlanPtr& plan, double scale, const OptTensor& grad_c2p,
                       const OptTensor& grad_p2c, const OptTensor& grad_p2p) {
  TORCH_CHECK(!(c10::GradMode::is_enabled() && grad.requires_grad()),
              "mtbert::disentangled_scores: double backward is not supported (a backward pass with create_graph "
              "through the position terms c2p, p2c, p2p)");
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  dispatch_backward(grad, plan, scale, grad_c2p, grad_p2c, grad_p2p);
}

// Under autocast (CPU or CUDA) content comes from a matrix product that
// autocast ran in bf16 (or fp16), while the padding bias, made from the
// float32 embeddings, stays float32: the op then runs in content's dtype. The
// position terms are cast to it, and the bias is first clamped to that dtype's
// finite range, so that a float32 mask of its lowest value becomes the
// dtype's lowest value (as the op's contract says), not -inf.
at::Tensor autocast_forward(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                            const RelativePlanPtr& plan, double scale, const OptTensor& bias, const OptTensor& p2p) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  const at::ScalarType dtype = content.scalar_type();
  auto in_dtype = [&](const OptTensor& t) -> OptTensor {
    if (!present(t) || t->scalar_type() == dtype) return t;
    return t->to(dtype);
  };
  OptTensor saturated_bias = bias;
  if (present(bias) && bias->scalar_type() != dtype) {
    double lowest = 0, highest = 0;
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "disentangled_scores_autocast", [&] {
      lowest = static_cast<double>(std::numeric_limits<scalar_t>::lowest());
      highest = static_cast<double>(std::numeric_limits<scalar_t>::max());
    });
    saturated_bias = bias->clamp(lowest, highest).to(dtype);
  }
  return dispatch_forward(content, in_dtype(c2p), in_dtype(p2c), plan, scale, saturated_bias, in_dtype(p2p));
}

}  // namespace

at::Tensor disentangled_scores(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                               const RelativePlanPtr& plan, double scale, const OptTensor& bias, const OptTensor& p2p) {
  return dispatch_forward(content, c2p, p2c, plan, scale, bias, p2p);
}

}  // namespace mtbert::ops

TORCH_LIBRARY(mtbert, m) {
  using mtbert::ops::RelativePlan;
  using Plan = c10::intrusive_ptr<RelativePlan>;
  // torch.classes.mtbert.RelativePlan(index, tile_rows): see relative_plan.h.
  m.class_<RelativePlan>("RelativePlan")
      .def(torch::init<at::Tensor, int64_t>())
      .def("length", [](const Plan& self) { return self->length(); })
      .def("span", [](const Plan& self) { return self->span(); })
      .def("index", [](const Plan& self) { return self->index(); })
      .def("tile_rows", [](const Plan& self) { return self->tile_rows(); })
      .def("width", [](const Plan& self) { return self->width(); })
      .def("c2p_first", [](const Plan& self) { return self->c2p_first(); })
      .def("p2c_first", [](const Plan& self) { return self->p2c_first(); })
      .def("c2p_rows", [](const Plan& self) { return self->c2p_rows(); })
      .def("p2c_rows", [](const Plan& self) { return self->p2c_rows(); });
  m.def(
      "disentangled_scores(Tensor content, Tensor? c2p, Tensor? p2c, __torch__.torch.classes.mtbert.RelativePlan plan, "
      "float scale, Tensor? bias=None, Tensor? p2p=None) -> Tensor");
  // Writes the gradients of c2p, p2c and p2p into the tensors given (in the
  // terms' layouts; absent where not wanted).
  m.def(
      "disentangled_scores_backward(Tensor grad, __torch__.torch.classes.mtbert.RelativePlan plan, float scale, "
      "Tensor(a!)? grad_c2p, Tensor(b!)? grad_p2c, Tensor(c!)? grad_p2p) -> ()");
}

TORCH_LIBRARY_IMPL(mtbert, Autograd, m) {
  m.impl("disentangled_scores", &mtbert::ops::autograd_forward);
  m.impl("disentangled_scores_backward", &mtbert::ops::autograd_backward);
}
TORCH_LIBRARY_IMPL(mtbert, AutocastCPU, m) { m.impl("disentangled_scores", &mtbert::ops::autocast_forward); }
TORCH_LIBRARY_IMPL(mtbert, AutocastCUDA, m) { m.impl("disentangled_scores", &mtbert::ops::autocast_forward); }
TORCH_LIBRARY_IMPL(mtbert, CPU, m) {
  m.impl("disentangled_scores", &mtbert::ops::detail::forward_cpu);
  m.impl("disentangled_scores_backward", &mtbert::ops::detail::backward_cpu);
}
#ifdef MTBERT_WITH_CUDA
TORCH_LIBRARY_IMPL(mtbert, CUDA, m) {
  m.impl("disentangled_scores", &mtbert::ops::detail::forward_cuda);
  m.impl("disentangled_scores_backward", &mtbert::ops::detail::backward_cuda);
}
#endif
