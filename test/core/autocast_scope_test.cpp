// bf16 autocast scopes: matrix products in bfloat16 inside, float32 outside,
// nested scopes restore what was there, parameters and gradients stay float32.
#include "core/autocast_scope.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include "support/test_support.h"

using mtbert::AutocastScope;

TEST_CASE("inside a bf16 scope, linear layers compute in bfloat16, outside, in float32", "[autocast]") {
  torch::manual_seed(1);
  torch::nn::Linear linear(8, 4);
  const auto x = torch::randn({3, 8});
  const auto reference = linear(x);
  CHECK(reference.scalar_type() == torch::kFloat);
  {
    AutocastScope scope(torch::kCPU, true);
    const auto y = linear(x);
    CHECK(y.scalar_type() == torch::kBFloat16);
    // bfloat16 keeps 8 bits of mantissa: a relative error of a few 1e-3.
    CHECK((y.to(torch::kFloat) - reference).abs().max().item<double>() < 0.05);
    {
      AutocastScope inner(torch::kCPU, true);
      CHECK(linear(x).scalar_type() == torch::kBFloat16);
    }
    CHECK(linear(x).scalar_type() == torch::kBFloat16);  // the inner scope restored "on"
  }
  CHECK(linear(x).scalar_type() == torch::kFloat);
  {
    AutocastScope off(torch::kCPU, false);
    CHECK(linear(x).scalar_type() == torch::kFloat);
  }
}

TEST_CASE("backward after a bf16 forward gives float32 gradients of float32 weights", "[autocast]") {
  torch::manual_seed(2);
  torch::nn::Linear linear(8, 4);
  const auto x = torch::randn({3, 8});
  torch::Tensor loss;
  {
    AutocastScope scope(torch::kCPU, true);
    loss = linear(x).to(torch::kFloat).pow(2).sum();
  }
  loss.backward();
  CHECK(linear->weight.scalar_type() == torch::kFloat);
  CHECK(linear->weight.grad().scalar_type() == torch::kFloat);
  // Against the float32 gradient: d/dW sum((Wx+b)^2) = 2 (Wx+b) x^T.
  const auto exact = 2 * torch::matmul((linear(x)).detach().t(), x);
  CHECK((linear->weight.grad() - exact).abs().max().item<double>() < 0.1 * exact.abs().max().item<double>());
}
