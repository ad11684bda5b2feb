// mtbert::ops::bias_gelu: gelu(x + bias) in one pass. The float kernel (erf
// and exp as vectorized polynomials) against LibTorch's gelu over the whole
// range of inputs, both forms; its gradients against autograd through
// LibTorch's operators; the double kernel by gradcheck; the bias gradient the
// same whatever the thread count; bf16 activations with a float bias as the
// float kernel on the widened values; the fallbacks (other dtype pairs, a
// graph of the gradient) as LibTorch computes them.
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>

#include "ops/bias_gelu.h"
#include "support/gradcheck.h"
#include "support/test_support.h"
#include "support/thread_count.h"

using mtbert::ops::bias_gelu;
using mtbert::ops::GeluForm;

namespace {

const char* approximate(GeluForm form) { return form == GeluForm::Erf ? "none" : "tanh"; }

// Inputs over the range GELU sees: most in [-4, 4], a tail out to +-12, and
// the exact points 0 and where exp underflows.
torch::Tensor wide_inputs(torch::Dtype dtype) {
  auto x = torch::randn({37, 129}, dtype) * 2;
  x.view({-1}).narrow(0, 0, 400).mul_(6);
  x.view({-1})[400] = 0;
  x.view({-1})[401] = -20;
  x.view({-1})[402] = 20;
  return x;
}

}  // namespace

TEST_CASE("bias_gelu in float matches LibTorch's gelu to 2e-7 per unit of input", "[ops][gelu]") {
  torch::manual_seed(3);
  for (const auto form : {GeluForm::Erf, GeluForm::Tanh}) {
    auto x = wide_inputs(torch::kFloat);
    auto bias = torch::randn({129});
    auto ours = bias_gelu(x, bias, form);
    auto u = (x + bias).to(torch::kDouble);
    auto exact = torch::gelu(u, approximate(form));
    // A&S 7.1.26's erf is within 1.5e-7; GELU multiplies by u / 2.
    auto error = (ours.to(torch::kDouble) - exact).abs() / u.abs().clamp_min(1);
    INFO("form " << approximate(form) << " max scaled error " << error.max().item<double>());
    CHECK(error.max().item<double>() < 2e-7);
    CHECK(ours.sizes() == x.sizes());
  }
}

TEST_CASE("bias_gelu's float gradients match autograd through LibTorch's gelu", "[ops][gelu]") {
  torch::manual_seed(4);
  for (const auto form : {GeluForm::Erf, GeluForm::Tanh}) {
    auto x = wide_inputs(torch::kFloat).requires_grad_(true);
    auto bias = torch::randn({129}, torch::requires_grad());
    auto grad_out = torch::randn({37, 129});
    auto [gx, gb] = [&] {
      auto g = torch::autograd::grad({bias_gelu(x, bias, form)}, {x, bias}, {grad_out});
      return std::make_pair(g[0], g[1]);
    }();
    auto xd = x.detach().to(torch::kDouble).requires_grad_(true);
    auto bd = bias.detach().to(torch::kDouble).requires_grad_(true);
    auto ref = torch::autograd::grad({torch::gelu(xd + bd, approximate(form))}, {xd, bd}, {grad_out.to(torch::kDouble)});
    const double x_error = (gx.to(torch::kDouble) - ref[0]).abs().max().item<double>();
    const double bias_error = ((gb.to(torch::kDouble) - ref[1]).abs() / ref[1].abs().clamp_min(1)).max().item<double>();
    INFO("form " << approximate(form) << ": input gradient error " << x_error << ", bias " << bias_error);
    CHECK(x_error < 2e-6);
    CHECK(bias_error < 1e-5);
  }
}

TEST_CASE("bias_gelu passes gradcheck in double", "[ops][gelu][gradcheck]") {
  torch::manual_seed(5);
  for (const auto form : {GeluForm::Erf, GeluForm::Tanh}) {
    auto x = torch::randn({3, 2, 5}, torch::kDouble) * 2;
    auto bias = torch::randn({5}, torch::kDouble);
    auto f = [&](const std::vector<torch::Tensor>& in) { return bias_gelu(in[0], in[1], form); };
    auto result = mtbert::test::gradcheck(f, {x, bias}, {true, true});
    INFO(result.worst);
    CHECK(result.ok);
    // And the double forward is LibTorch's to rounding.
    CHECK(torch::allclose(bias_gelu(x, bias, form), torch::gelu(x + bias, approximate(form)), 1e-14, 1e-14));
  }
}

TEST_CASE("bias_gelu's bias gradient does not depend on the thread count", "[ops][gelu]") {
  mtbert::test::RestoreThreadCount restore;
  torch::manual_seed(6);
  auto x = torch::randn({300, 64}, torch::requires_grad());
  auto bias = torch::randn({64}, torch::requires_grad());
  auto grad_out = torch::randn({300, 64});
  auto bias_grad = [&](int threads) {
    at::set_num_threads(threads);
    return torch::autograd::grad({bias_gelu(x, bias, GeluForm::Erf)}, {bias}, {grad_out})[0];
  };
  auto one = bias_grad(1);
  CHECK(torch::equal(one, bias_grad(2)));
  CHECK(torch::equal(one, bias_grad(3)));
}

TEST_CASE("bias_gelu in bf16 with a float bias is the float kernel on the widened input, rounded once",
          "[ops][gelu][bf16]") {
  torch::manual_seed(8);
  for (const auto form : {GeluForm::Erf, GeluForm::Tanh}) {
    // Rows longer than one conversion chunk (ops/bf16_rows.h), and an odd width.
    for (const int64_t width : {1031, 129}) {
      auto x = (torch::randn({9, width}) * 3).to(torch::kBFloat16).requires_grad_(true);
      auto bias = torch::randn({width}, torch::requires_grad());
      auto grad_out = torch::randn({9, width}).to(torch::kBFloat16);
      auto y = bias_gelu(x, bias, form);
      REQUIRE(y.scalar_type() == torch::kBFloat16);
      auto g = torch::autograd::grad({y}, {x, bias}, {grad_out});
      REQUIRE(g[0].scalar_type() == torch::kBFloat16);
      REQUIRE(g[1].scalar_type() == torch::kFloat);

      // The same arithmetic by construction: the float kernel on the widened
      // values, its outputs rounded to bf16 (the bias gradient left in float).
      auto xf = x.detach().to(torch::kFloat).requires_grad_(true);
      auto bf = bias.detach().requires_grad_(true);
      auto yf = bias_gelu(xf, bf, form);
      auto gf = torch::autograd::grad({yf}, {xf, bf}, {grad_out.to(torch::kFloat)});
      CHECK(torch::equal(y, yf.to(torch::kBFloat16)));
      CHECK(torch::equal(g[0], gf[0].to(torch::kBFloat16)));
      CHECK(torch::equal(g[1], gf[1]));

      // Against float64: within the output's one rounding to bf16 (2^-8
      // relative) and the float kernel's own error.
      auto u = x.detach().to(torch::kDouble) + bias.detach().to(torch::kDouble);
      auto exact = torch::gelu(u, approximate(form));
      auto error = (y.to(torch::kDouble) - exact).abs() - exact.abs() * std::ldexp(1.0, -8);
      INFO("form " << approximate(form) << " width " << width);
      CHECK(error.max().item<double>() < 2e-6);
    }
  }
}

TEST_CASE("bias_gelu in bf16 takes a bf16 bias too, and returns its gradient in bf16", "[ops][gelu][bf16]") {
  torch::manual_seed(9);
  auto x = torch::randn({6, 40}).to(torch::kBFloat16);
  auto bias = torch::randn({40}).to(torch::kBFloat16).requires_grad_(true);
  auto y = bias_gelu(x, bias, GeluForm::Erf);
  CHECK(torch::equal(y, bias_gelu(x, bias.detach().to(torch::kFloat), GeluForm::Erf)));
  auto g = torch::autograd::grad({y.sum()}, {bias})[0];
  CHECK(g.scalar_type() == torch::kBFloat16);
}

TEST_CASE("bias_gelu falls back to LibTorch's operators for other dtype pairs and double backward", "[ops][gelu]") {
  torch::manual_seed(7);
  auto x = torch::randn({4, 8});
  auto bias = torch::randn({8}, torch::kDouble);
  auto out = bias_gelu(x, bias, GeluForm::Erf);
  CHECK(out.scalar_type() == torch::kFloat);
  CHECK(torch::equal(out, torch::gelu(x + bias.to(torch::kFloat))));

  // A graph of the gradient (create_graph): the second derivative exists and
  // matches LibTorch's.
  auto xd = torch::randn({4, 8}, torch::dtype(torch::kDouble).requires_grad(true));
  auto bd = torch::randn({8}, torch::dtype(torch::kDouble).requires_grad(true));
  auto second = [&](const torch::Tensor& y) {
    auto g = torch::autograd::grad({y.sum()}, {xd}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
    return torch::autograd::grad({g.sum()}, {xd})[0];
  };
  CHECK(torch::allclose(second(bias_gelu(xd, bd, GeluForm::Erf)), second(torch::gelu(xd + bd)), 1e-12, 1e-12));
  CHECK(torch::allclose(second(bias_gelu(xd, bd, GeluForm::Tanh)), second(torch::gelu(xd + bd, "tanh")), 1e-12,
                        1e-12));
}
