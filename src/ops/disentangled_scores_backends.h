#pragma once
// The kernels of mtbert::disentangled_scores per backend, registered with the
// dispatcher by disentangled_scores.cpp (in the translation unit that
// registers the op's schema and its plan class, whose type the kernels'
// signatures name: one file, so the order of registration is fixed).
// CPU: disentangled_scores_cpu.cpp; CUDA: disentangled_scores_cuda.cu.
#include <ATen/core/Tensor.h>
#include <c10/util/Optional.h>

#include "ops/relative_plan.h"

namespace mtbert::ops::detail {

at::Tensor forward_cpu(const at::Tensor& content, const c10::optional<at::Tensor>& c2p,
                       const c10::optional<at::Tensor>& p2c, const RelativePlanPtr& plan, double scale,
                       const c10::optional<at::Tensor>& bias, const c10::optional<at::Tensor>& p2p);
void backward_cpu(const at::Tensor& grad, const RelativePlanPtr& plan, double scale,
                  const c10::optional<at::Tensor>& grad_c2p, const c10::optional<at::Tensor>& grad_p2c,
                  const c10::optional<at::Tensor>& grad_p2p);

at::Tensor forward_cuda(const at::Tensor& content, const c10::optional<at::Tensor>& c2p,
                        const c10::optional<at::Tensor>& p2c, const RelativePlanPtr& plan, double scale,
                        const c10::optional<at::Tensor>& bias, const c10::optional<at::Tensor>& p2p);
void backward_cuda(const at::Tensor& grad, const RelativePlanPtr& plan, double scale,
                   const c10::optional<at::Tensor>& grad_c2p, const c10::optional<at::Tensor>& grad_p2c,
                   const c10::optional<at::Tensor>& grad_p2p);

}  // namespace mtbert::ops::detail
