// The schema of mtbert::disentangled_scores, its autograd, and the C++ entry
// point the model calls. The TORCH_LIBRARY block lives here, next to that
// entry point, so that linking the entry point always links the schema too;
// the CPU and CUDA kernels register themselves from their own files.
#include "ops/disentangled_scores.h"

#include <ATen/ExpandUtils.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include "ops/disentangled_scores_checks.h"

namespace mtbert::ops {

namespace {

using OptTensor = c10::optional<at::Tensor>;
using ForwardSignature = at::Tensor(const at::Tensor&, const OptTensor&, const OptTensor&, const at::Tensor&, double,
                                    const OptTensor&);
using BackwardSignature = std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, int64_t, double,
                                                              bool, bool);

at::Tensor dispatch_forward(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                            const at::Tensor& rel_index, double scale, const OptTensor& bias) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("mtbert::disentangled_scores", "")
                             .typed<ForwardSignature>();
  return op.call(content, c2p, p2c, rel_index, scale, bias);
}

std::tuple<at::Tensor, at::Tensor> dispatch_backward(const at::Tensor& grad, const at::Tensor& rel_index, int64_t span,
                                                     double scale, bool want_c2p, bool want_p2c) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("mtbert::disentangled_scores_backward", "")
                             .typed<BackwardSignature>();
  return op.call(grad, rel_index, span, scale, want_c2p, want_p2c);
}

class DisentangledScoresFunction : public torch::autograd::Function<DisentangledScoresFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& content, const OptTensor& c2p,
                            const OptTensor& p2c, const at::Tensor& rel_index, double scale, const OptTensor& bias) {
    const detail::ScoreShape shape = detail::check_forward_args(content, c2p, p2c, rel_index, bias);
    ctx->save_for_backward({rel_index});
    ctx->saved_data["span"] = shape.span;
    ctx->saved_data["scale"] = scale;
    // needs_input_grad counts the tensor arguments actually given: absent
    // optionals have no edge.
    int64_t edge = 1;  // content is edge 0
    ctx->saved_data["c2p_edge"] = detail::present(c2p) ? edge++ : int64_t{-1};
    ctx->saved_data["p2c_edge"] = detail::present(p2c) ? edge++ : int64_t{-1};
    ++edge;  // rel_index
    ctx->saved_data["bias_edge"] = detail::present(bias) ? edge : int64_t{-1};
    ctx->saved_data["bias_sizes"] = detail::present(bias) ? bias->sizes().vec() : std::vector<int64_t>{};
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    return dispatch_forward(content, c2p, p2c, rel_index, scale, bias);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor& grad = grads[0];
    const at::Tensor rel_index = ctx->get_saved_variables()[0];
    auto wanted = [&](const char* edge) {
      const int64_t index = ctx->saved_data[edge].toInt();
      return index >= 0 && ctx->needs_input_grad(static_cast<size_t>(index));
    };
    const bool want_c2p = wanted("c2p_edge");
    const bool want_p2c = wanted("p2c_edge");
    at::Tensor grad_c2p, grad_p2c;
    if (want_c2p || want_p2c) {
      std::tie(grad_c2p, grad_p2c) = dispatch_backward(grad, rel_index, ctx->saved_data["span"].toInt(),
                                                       ctx->saved_data["scale"].toDouble(), want_c2p, want_p2c);
    }
    at::Tensor grad_bias;
    if (wanted("bias_edge")) {
      const auto sizes = ctx->saved_data["bias_sizes"].toIntVector();
      grad_bias = at::sum_to(grad, sizes);
    }
    return {grad, grad_c2p, grad_p2c, at::Tensor(), at::Tensor(), grad_bias};
  }
};

at::Tensor autograd_forward(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                            const at::Tensor& rel_index, double scale, const OptTensor& bias) {
  return DisentangledScoresFunction::apply(content, c2p, p2c, rel_index, scale, bias);
}

}  // namespace

at::Tensor disentangled_scores(const at::Tensor& content, const OptTensor& c2p, const OptTensor& p2c,
                               const at::Tensor& rel_index, double scale, const OptTensor& bias) {
  return dispatch_forward(content, c2p, p2c, rel_index, scale, bias);
}

}  // namespace mtbert::ops

TORCH_LIBRARY(mtbert, m) {
  m.def(
      "disentangled_scores(Tensor content, Tensor? c2p, Tensor? p2c, Tensor rel_index, float scale, "
      "Tensor? bias=None) -> Tensor");
  // Gradients of c2p and p2c ([B, H, N, span]; undefined where not wanted).
  m.def(
      "disentangled_scores_backward(Tensor grad, Tensor rel_index, int span, float scale, bool want_c2p, "
      "bool want_p2c) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(mtbert, Autograd, m) { m.impl("disentangled_scores", &mtbert::ops::autograd_forward); }
