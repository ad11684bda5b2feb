#include "optim/gradient_clipping.h"

#include <cmath>

#include <torch/torch.h>

#include "support/test_support.h"

namespace {

using mtbert::clip_gradients;

// Parameters whose gradients are given, in the dtypes given.
std::vector<torch::Tensor> with_gradients(const std::vector<torch::Tensor>& grads) {
  std::vector<torch::Tensor> params;
  for (const auto& g : grads) {
    auto p = torch::zeros_like(g).requires_grad_();
    p.mutable_grad() = g.clone();
    params.push_back(p);
  }
  return params;
}

// The global norm computed by hand, in double.
double hand_norm(const std::vector<torch::Tensor>& grads) {
  double sum = 0;
  for (const auto& g : grads) sum += g.to(torch::kDouble).pow(2).sum().item<double>();
  return std::sqrt(sum);
}

}  // namespace

TEST_CASE("clip_gradients scales every gradient by max_norm / (norm + 1e-6) over all groups", "[optim]") {
  torch::manual_seed(3);
  // Two dtypes (two foreach groups), a 0-d gradient, and a parameter without one.
  const std::vector<torch::Tensor> grads = {torch::randn({7, 5}), torch::randn({3}), torch::randn({}),
                                            torch::randn({4, 4}).to(torch::kBFloat16)};
  auto params = with_gradients(grads);
  params.push_back(torch::zeros({2}).requires_grad_());
  const double norm = hand_norm(grads);
  const double max_norm = norm / 4;

  const auto total = clip_gradients(params, max_norm);
  CHECK(total.dim() == 0);
  CHECK(total.item<double>() == Approx(norm).epsilon(1e-5));
  const double coefficient = max_norm / (norm + 1e-6);
  for (size_t i = 0; i < grads.size(); ++i) {
    const auto expected = grads[i].to(torch::kDouble) * coefficient;
    const double tolerance = grads[i].scalar_type() == torch::kBFloat16 ? 1e-2 : 1e-6;
    CHECK(torch::allclose(params[i].grad().to(torch::kDouble), expected, tolerance, tolerance));
    CHECK(params[i].grad().scalar_type() == grads[i].scalar_type());
  }
  CHECK_FALSE(params.back().grad().defined());
  // Within the bound now: a second clip changes nothing.
  const auto before = params[0].grad().clone();
  clip_gradients(params, max_norm * 1.01);
  CHECK(torch::equal(params[0].grad(), before));
}

TEST_CASE("clip_gradients leaves gradients below the bound as they are", "[optim]") {
  const std::vector<torch::Tensor> grads = {torch::full({3}, 0.5), torch::full({2, 2}, -0.25)};
  auto params = with_gradients(grads);
  const auto total = clip_gradients(params, 10.0);
  CHECK(total.item<double>() == Approx(hand_norm(grads)));
  for (size_t i = 0; i < grads.size(); ++i) CHECK(torch::equal(params[i].grad(), grads[i]));
}

TEST_CASE("clip_gradients of parameters without gradients returns a zero norm", "[optim]") {
  std::vector<torch::Tensor> params = {torch::zeros({3}).requires_grad_()};
  CHECK(clip_gradients(params, 1.0).item<double>() == 0.0);
}

TEST_CASE("clip_gradients agrees with LibTorch's clip_grad_norm_", "[optim]") {
  torch::manual_seed(5);
  const std::vector<torch::Tensor> grads = {torch::randn({64, 32}) * 3, torch::randn({32})};
  auto ours = with_gradients(grads);
  auto theirs = with_gradients(grads);
  const double total = clip_gradients(ours, 1.0).item<double>();
  const double reference = torch::nn::utils::clip_grad_norm_(theirs, 1.0);
  CHECK(total == Approx(reference).epsilon(1e-6));
  for (size_t i = 0; i < grads.size(); ++i) CHECK(torch::allclose(ours[i].grad(), theirs[i].grad(), 1e-6, 1e-7));
}
