// bf16 autocast scopes: matrix products in bfloat16 inside, float32 outside,
// nested scopes restore what was there, parameters and gradients stay float32;
// a WeightCastCache keeps the weights' bf16 copies across scopes, gives the
// gradients casting anew would, and drops them when it ends.
#include "core/autocast_scope.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include "support/test_support.h"

using mtbert::AutocastScope;
using mtbert::WeightCastCache;

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

namespace {

// The bf16 copy autocast makes of `weight` in a scope of its own, kept alive.
torch::Tensor cast_in_a_scope(const torch::Tensor& weight) {
  AutocastScope scope(torch::kCPU, true);
  return at::autocast::cached_cast(at::kBFloat16, weight, c10::DeviceType::CPU);
}

}  // namespace

TEST_CASE("a WeightCastCache keeps the bf16 copies of the weights across scopes until it ends", "[autocast]") {
  torch::manual_seed(3);
  torch::nn::Linear linear(8, 4);
  const auto first = cast_in_a_scope(linear->weight), second = cast_in_a_scope(linear->weight);
  CHECK(first.unsafeGetTensorImpl() != second.unsafeGetTensorImpl());  // without one: a copy per scope
  torch::Tensor kept;
  {
    const WeightCastCache cache;
    kept = cast_in_a_scope(linear->weight);
    CHECK(cast_in_a_scope(linear->weight).unsafeGetTensorImpl() == kept.unsafeGetTensorImpl());
    {
      const WeightCastCache nested;  // nesting keeps them too
      CHECK(cast_in_a_scope(linear->weight).unsafeGetTensorImpl() == kept.unsafeGetTensorImpl());
    }
    CHECK(cast_in_a_scope(linear->weight).unsafeGetTensorImpl() == kept.unsafeGetTensorImpl());
  }
  // Ended: a changed weight is cast anew.
  {
    torch::NoGradGuard no_grad;
    linear->weight.mul_(2);
  }
  const auto after = cast_in_a_scope(linear->weight);
  CHECK(after.unsafeGetTensorImpl() != kept.unsafeGetTensorImpl());
  CHECK(torch::equal(after, linear->weight.detach().to(torch::kBFloat16)));
}

TEST_CASE("forward passes sharing a WeightCastCache give the gradients of casting anew", "[autocast]") {
  torch::manual_seed(4);
  torch::nn::Linear linear(8, 4);
  const auto x1 = torch::randn({3, 8}), x2 = torch::randn({5, 8});
  // Two tasks' forward and backward passes before one optimizer step.
  auto gradients = [&](bool shared) {
    linear->zero_grad();
    std::unique_ptr<WeightCastCache> cache = shared ? std::make_unique<WeightCastCache>() : nullptr;
    for (const auto& x : {x1, x2}) {
      torch::Tensor loss;
      {
        AutocastScope scope(torch::kCPU, true);
        loss = linear(x).to(torch::kFloat).pow(2).sum();
      }
      loss.backward();
    }
    return std::make_pair(linear->weight.grad().clone(), linear->bias.grad().clone());
  };
  const auto anew = gradients(false), shared = gradients(true);
  CHECK(torch::equal(anew.first, shared.first));
  CHECK(torch::equal(anew.second, shared.second));
}
