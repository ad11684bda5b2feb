// models/autocast_linear.h: a Linear layer's product whose weights autocast
// casts as leaves. Outside autocast it is the layer's own product, bit for
// bit; under bf16 autocast it is in bf16 and within its rounding of float32,
// and inside a WeightCastCache every call reuses one bf16 copy of the weight.
#include "models/autocast_linear.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include "core/autocast_scope.h"
#include "support/test_support.h"

using mtbert::autocast_input;
using mtbert::autocast_linear;
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
    // The copy the product used is autocast's cached one, the same each call.
    const auto cast = at::autocast::cached_cast(at::kBFloat16, layer->weight, c10::DeviceType::CPU);
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
