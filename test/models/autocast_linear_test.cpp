// models/autocast_linear.h: a Linear layer's product whose weights autocast
// casts as leaves. Outside autocast it is the layer's own product, bit for
// bit; under bf16 autocast it is in bf16 and within its rounding of float32,
// and inside a WeightCastCache every call reuses one bf16 copy of the weight.
#include "models/autocast_linear.h"

#include <torch/torch.h>

#include "core/autocast_scope.h"
#include "support/test_support.h"

using mtbert::autocast_input;
using mtbert::autocast_linear;
using mtbert::autocast_weight;
using mtbert::AutocastScope;
using mtbert::WeightCastCache;

TEST_CASE("autocast_linear is the layer's product outside autocast", "[models][autocast]") {
  torch::manual_seed(1);
  torch::nn::Linear layer(16, 8);
  const auto x = torch::randn({2, 5, 16});
  CHECK(torch::equal(autocast_linear(layer, x), layer(x)));
  CHECK(torch::equal(autocast_linear(layer, x, /*with_bias=*/false), torch::matmul(x, layer->weight.t())));
  CHECK(torch::equal(autocast_input(x), x));
}

TEST_CASE("under bf16 autocast autocast_linear computes in bf16 from one cached copy of the weights",
          "[models][autocast]") {
  torch::manual_seed(2);
  torch::nn::Linear layer(16, 8);
  const auto x = torch::randn({2, 5, 16});
  const auto exact = layer(x).detach();
  const WeightCastCache cache;
  torch::Tensor first;
  for (int call = 0; call < 2; ++call) {
    AutocastScope scope(torch::kCPU, true);
    const auto y = autocast_linear(layer, x);
    REQUIRE(y.scalar_type() == torch::kBFloat16);
    CHECK((y.to(torch::kFloat) - exact).abs().max().item<double>() < 0.05);
    CHECK(autocast_input(x).scalar_type() == torch::kBFloat16);
    // The copy the product used is the kept one, the same each call.
    const auto cast = autocast_weight(layer->weight);
    if (call == 0) first = cast;
    CHECK(cast.unsafeGetTensorImpl() == first.unsafeGetTensorImpl());
  }
  // Gradients reach the float32 weights through the cached copy.
  torch::Tensor loss;
  {
    AutocastScope scope(torch::kCPU, true);
    loss = autocast_linear(layer, x).to(torch::kFloat).sum();
  }
  loss.backward();
  REQUIRE(layer->weight.grad().defined());
  CHECK(layer->weight.grad().scalar_type() == torch::kFloat);
}

TEST_CASE("a WeightCastCache keeps frozen weights' copies and InferenceMode's, and never a stale or gradless one",
          "[models][autocast]") {
  torch::manual_seed(3);
  torch::nn::Linear layer(16, 8);
  const auto same = [](const torch::Tensor& a, const torch::Tensor& b) {
    return a.unsafeGetTensorImpl() == b.unsafeGetTensorImpl();
  };
  const WeightCastCache cache;
  AutocastScope scope(torch::kCPU, true);
  // A frozen weight (autocast's own cache keeps none): one copy.
  layer->weight.set_requires_grad(false);
  const auto frozen = autocast_weight(layer->weight);
  CHECK(frozen.scalar_type() == torch::kBFloat16);
  CHECK(same(autocast_weight(layer->weight), frozen));
  layer->weight.set_requires_grad(true);
  // Under InferenceMode (where newer LibTorch's autocast keeps none): one copy,
  // an inference tensor, not handed to a pass with autograd afterwards.
  torch::Tensor inference;
  {
    c10::InferenceMode guard;
    inference = autocast_weight(layer->bias);
    CHECK(same(autocast_weight(layer->bias), inference));
  }
  const auto trained = autocast_weight(layer->bias);
  CHECK_FALSE(same(trained, inference));
  CHECK(trained.requires_grad());
  // A copy made without autograd is made again for a pass with it; one made
  // with autograd serves a pass without.
  torch::Tensor gradless;
  {
    torch::NoGradGuard no_grad;
    gradless = autocast_weight(layer->weight);
    CHECK_FALSE(gradless.requires_grad());
  }
  const auto with_grad = autocast_weight(layer->weight);
  CHECK(with_grad.requires_grad());
  {
    torch::NoGradGuard no_grad;
    CHECK(same(autocast_weight(layer->weight), with_grad));
    // A weight changed in place (its version moves) is cast again.
    layer->weight.mul_(2);
  }
  const auto changed = autocast_weight(layer->weight);
  CHECK_FALSE(same(changed, with_grad));
  CHECK(torch::equal(changed, layer->weight.detach().to(torch::kBFloat16)));
}

TEST_CASE("without a WeightCastCache nothing is kept", "[models][autocast]") {
  torch::nn::Linear layer(4, 2);
  CHECK_FALSE(mtbert::kept_weight_cast(layer->weight, torch::kBFloat16).defined());
}
