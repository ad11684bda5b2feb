#pragma once
// A finite-difference gradient check in double (LibTorch's C++ API has no
// gradcheck): the full Jacobian of f at the inputs by central differences
// against the one autograd gives (one backward pass per output element), so
// every vector-Jacobian product is checked, not a random projection of them.
#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace mtbert::test {

struct GradcheckResult {
  double max_abs_error = 0;  // over all Jacobian entries
  double max_abs_entry = 0;  // largest |entry|, for scale
  int64_t entries = 0;
  bool ok = true;
  std::string worst;  // where the largest error is
};

// f maps double tensors to one double tensor. Inputs with `differentiable[k]`
// false (index tensors) are passed through unchanged and not checked.
// An entry passes when |analytic - numeric| <= atol + rtol * |numeric|.
inline GradcheckResult gradcheck(const std::function<torch::Tensor(const std::vector<torch::Tensor>&)>& f,
                                 std::vector<torch::Tensor> inputs, const std::vector<bool>& differentiable,
                                 double eps = 1e-6, double atol = 1e-8, double rtol = 1e-6) {
  GradcheckResult result;
  std::vector<torch::Tensor> leaves;
  std::vector<size_t> leaf_input;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!differentiable[k]) continue;
    TORCH_CHECK(inputs[k].scalar_type() == torch::kDouble, "gradcheck: differentiable inputs must be double");
    inputs[k] = inputs[k].detach().clone().requires_grad_(true);
    leaves.push_back(inputs[k]);
    leaf_input.push_back(k);
  }
  const torch::Tensor out = f(inputs).reshape({-1});
  const int64_t outputs = out.numel();

  // Analytic Jacobian, row by row: d out[o] / d leaf.
  std::vector<torch::Tensor> analytic;  // per leaf [outputs, leaf numel]
  for (const auto& leaf : leaves) analytic.push_back(torch::zeros({outputs, leaf.numel()}, leaf.options()));
  for (int64_t o = 0; o < outputs; ++o) {
    auto seed = torch::zeros_like(out);
    seed[o] = 1.0;
    auto grads = torch::autograd::grad({out}, leaves, {seed}, /*retain_graph=*/true, /*create_graph=*/false,
                                       /*allow_unused=*/true);
    for (size_t l = 0; l < leaves.size(); ++l)
      if (grads[l].defined()) analytic[l][o] = grads[l].reshape({-1});
  }

  // Numeric Jacobian, column by column.
  torch::NoGradGuard no_grad;
  for (size_t l = 0; l < leaves.size(); ++l) {
    const torch::Tensor base = leaves[l].detach();
    for (int64_t e = 0; e < base.numel(); ++e) {
      auto evaluate = [&](double delta) {
        std::vector<torch::Tensor> shifted = inputs;
        auto x = base.clone();
        x.view({-1})[e] += delta;
        shifted[leaf_input[l]] = x;
        return f(shifted).reshape({-1});
      };
      const torch::Tensor numeric = (evaluate(eps) - evaluate(-eps)) / (2 * eps);
      const torch::Tensor error = (analytic[l].select(1, e) - numeric).abs();
      const torch::Tensor allowed = atol + rtol * numeric.abs();
      result.entries += outputs;
      result.max_abs_entry = std::max(result.max_abs_entry, numeric.abs().max().item<double>());
      const double worst = error.max().item<double>();
      if (worst > result.max_abs_error) {
        result.max_abs_error = worst;
        std::ostringstream where;
        where << "input " << leaf_input[l] << " element " << e << ": max error " << worst;
        result.worst = where.str();
      }
      if ((error > allowed).any().item<bool>()) result.ok = false;
    }
  }
  return result;
}

}  // namespace mtbert::test
