// mtbert::ops::fused_dropout: each output is 0 or the input times 1 / (1 - p)
// (as LibTorch rounds it), the keep rate is 1 - p within a few standard
// deviations (even and odd elements, which take the two halves of one random
// word, alike and uncorrelated), masks follow torch::manual_seed and not the
// thread count, and gradients flow through the forward pass's mask (also when
// a graph of the gradient is built).
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>

#include "ops/fused_dropout.h"
#include "support/test_support.h"
#include "support/thread_count.h"

using mtbert::ops::fused_dropout;

namespace {

// Kept fraction of `out`'s elements (the inputs are never exactly zero).
double kept_fraction(const torch::Tensor& out) { return (out != 0).to(torch::kDouble).mean().item<double>(); }

}  // namespace

TEST_CASE("fused_dropout is the identity outside training and at p = 0", "[ops][dropout]") {
  auto x = torch::randn({4, 5});
  CHECK(fused_dropout(x, 0.3, /*training=*/false).is_same(x));
  CHECK(fused_dropout(x, 0.0, /*training=*/true).is_same(x));
}

TEST_CASE("fused_dropout keeps 1 - p of the elements, scaled as LibTorch scales them", "[ops][dropout]") {
  torch::manual_seed(1);
  const int64_t n = 1 << 20;
  auto x = torch::rand({n}) + 0.5;  // never zero
  for (const double p : {0.1, 0.3, 0.5, 0.9}) {
    auto out = fused_dropout(x, p, true);
    auto kept = out != 0;
    // LibTorch: a float mask divided by 1 - p, times the input.
    const float scale = static_cast<float>(1.0 / (1.0 - p));
    CHECK(torch::equal(out.masked_select(kept), x.masked_select(kept) * scale));
    const double sigma = std::sqrt(p * (1 - p) / (n / 2.0));
    using torch::indexing::Slice;
    const double even = kept_fraction(out.index({Slice(0, n, 2)}));
    const double odd = kept_fraction(out.index({Slice(1, n, 2)}));
    CHECK(std::abs(even - (1 - p)) < 5 * sigma);
    CHECK(std::abs(odd - (1 - p)) < 5 * sigma);
    // The two halves of a random word are independent: both kept with (1 - p)^2.
    auto k = kept.to(torch::kDouble);
    const double both = (k.index({Slice(0, n, 2)}) * k.index({Slice(1, n, 2)})).mean().item<double>();
    const double sigma_both = std::sqrt((1 - p) * (1 - p) * (1 - (1 - p) * (1 - p)) / (n / 2.0));
    CHECK(std::abs(both - (1 - p) * (1 - p)) < 5 * sigma_both);
  }
}

TEST_CASE("fused_dropout masks follow manual_seed, not the thread count", "[ops][dropout]") {
  mtbert::test::RestoreThreadCount restore;
  auto x = torch::rand({300, 1001}) + 0.5;  // an odd count: the last random word is half used
  at::set_num_threads(2);
  torch::manual_seed(7);
  auto a = fused_dropout(x, 0.25, true);
  auto a_next = fused_dropout(x, 0.25, true);
  at::set_num_threads(1);
  torch::manual_seed(7);
  auto b = fused_dropout(x, 0.25, true);
  CHECK(torch::equal(a, b));
  CHECK_FALSE(torch::equal(a, a_next));  // every call draws a new seed
  torch::manual_seed(8);
  CHECK_FALSE(torch::equal(a, fused_dropout(x, 0.25, true)));
}

TEST_CASE("fused_dropout passes gradients through its mask", "[ops][dropout]") {
  torch::manual_seed(3);
  auto x = (torch::rand({64, 33}) + 0.5).requires_grad_(true);
  const double p = 0.2;
  auto out = fused_dropout(x, p, true);
  auto g = torch::randn({64, 33});
  out.backward(g);
  const float scale = static_cast<float>(1.0 / (1.0 - p));
  auto expected = torch::where(out.detach() != 0, g * scale, torch::zeros_like(g));
  CHECK(torch::equal(x.grad(), expected));
}

TEST_CASE("fused_dropout's gradient is differentiable (create_graph)", "[ops][dropout]") {
  torch::manual_seed(4);
  auto x = (torch::rand({10, 7}, torch::kDouble) + 0.5).requires_grad_(true);
  const double p = 0.4, scale = 1.0 / (1.0 - p);
  auto y = fused_dropout(x, p, true);
  auto mask = (y.detach() != 0).to(torch::kDouble);
  // d/dx sum(y^2) = 2 y mask scale; its sum's gradient: 2 (mask scale)^2.
  auto gx = torch::autograd::grad({(y * y).sum()}, {x}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  CHECK(torch::allclose(gx, 2 * y.detach() * mask * scale));
  gx.sum().backward();
  CHECK(torch::allclose(x.grad(), 2 * mask * scale * scale));
}

TEST_CASE("fused_dropout in double, half and bfloat16", "[ops][dropout]") {
  torch::manual_seed(5);
  for (const auto dtype : {torch::kDouble, torch::kHalf, torch::kBFloat16}) {
    auto x = (torch::rand({50, 40}) + 0.5).to(dtype).requires_grad_(true);
    auto out = fused_dropout(x, 0.3, true);
    REQUIRE(out.scalar_type() == dtype);
    auto kept = out != 0;
    // Scaled in the dtype's math type (double for double, float otherwise), then rounded.
    auto expected = dtype == torch::kDouble ? x.detach() * (1.0 / 0.7)
                                            : (x.detach().to(torch::kFloat) * static_cast<float>(1.0 / 0.7)).to(dtype);
    CHECK(torch::equal(out.masked_select(kept), expected.masked_select(kept)));
    out.sum().backward();
    CHECK(torch::equal(x.grad() != 0, kept));
  }
}

TEST_CASE("fused_dropout on strided inputs, empty inputs and at p = 1", "[ops][dropout]") {
  torch::manual_seed(6);
  auto x = (torch::rand({30, 20}) + 0.5).t();  // not contiguous
  auto out = fused_dropout(x, 0.5, true);
  CHECK(out.sizes() == x.sizes());
  auto kept = out != 0;
  CHECK(torch::equal(out.masked_select(kept), x.masked_select(kept) * 2.0f));

  CHECK(fused_dropout(torch::empty({0, 3}), 0.5, true).sizes() == torch::IntArrayRef({0, 3}));

  auto y = torch::rand({5, 5}).requires_grad_(true);
  auto zeros = fused_dropout(y, 1.0, true);
  CHECK(torch::equal(zeros, torch::zeros({5, 5})));
  zeros.sum().backward();
  CHECK(torch::equal(y.grad(), torch::zeros({5, 5})));
}

TEST_CASE("fused_dropout rejects p outside [0, 1]", "[ops][dropout]") {
  auto x = torch::ones({3});
  CHECK_THROWS_AS(fused_dropout(x, -0.1, true), c10::Error);
  CHECK_THROWS_AS(fused_dropout(x, 1.5, true), c10::Error);
}
