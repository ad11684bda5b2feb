// mtbert::ops::add_layer_norm: LayerNorm(x + bias + residual) in one pass per
// row. Float against LibTorch's layer_norm computed in double, with and
// without the bias, on rows of the widths BERT uses and an odd one; float
// gradients against autograd in double; gradcheck of the double kernel; the
// per-feature gradients the same whatever the thread count; x in bf16 beside
// float as the float kernel on the widened x; the fallback when a graph of
// the gradient is built.
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "ops/add_layer_norm.h"
#include "support/gradcheck.h"
#include "support/test_support.h"
#include "support/thread_count.h"

using mtbert::ops::add_layer_norm;

namespace {

struct Inputs {
  torch::Tensor x, bias, residual, gamma, beta;
};

// Offsets and scales as residual streams have them (a mean far from 0 is
// where a one-pass variance would lose digits).
Inputs make_inputs(int64_t rows, int64_t width, torch::Dtype dtype, bool with_bias) {
  Inputs in;
  in.x = torch::randn({rows / 4, 4, width}, dtype) * 3 + 20;
  in.residual = torch::randn({rows / 4, 4, width}, dtype);
  in.bias = with_bias ? torch::randn({width}, dtype) : torch::Tensor();
  in.gamma = torch::rand({width}, dtype) + 0.5;
  in.beta = torch::randn({width}, dtype);
  return in;
}

torch::Tensor reference(const Inputs& in, double eps) {
  auto sum = in.x + in.residual;
  if (in.bias.defined()) sum = sum + in.bias;
  return torch::layer_norm(sum, {in.gamma.numel()}, in.gamma, in.beta, eps);
}

Inputs to_double(const Inputs& in) {
  auto d = [](const torch::Tensor& t) { return t.defined() ? t.detach().to(torch::kDouble) : t; };
  return {d(in.x), d(in.bias), d(in.residual), d(in.gamma), d(in.beta)};
}

}  // namespace

TEST_CASE("add_layer_norm in float matches LibTorch's layer_norm of the sum", "[ops][layer_norm]") {
  torch::manual_seed(11);
  for (const int64_t width : {256, 768, 37}) {
    for (const bool with_bias : {false, true}) {
      const auto in = make_inputs(64, width, torch::kFloat, with_bias);
      const auto ours = add_layer_norm(in.x, in.bias, in.residual, in.gamma, in.beta, 1e-12);
      const auto exact = reference(to_double(in), 1e-12);
      const double error = (ours.to(torch::kDouble) - exact).abs().max().item<double>();
      INFO("width " << width << " bias " << with_bias << ": max abs error " << error);
      CHECK(error < 1e-5);
      CHECK(ours.sizes() == in.x.sizes());
    }
  }
}

TEST_CASE("add_layer_norm's float gradients match autograd in double", "[ops][layer_norm]") {
  torch::manual_seed(12);
  for (const bool with_bias : {false, true}) {
    auto in = make_inputs(96, 256, torch::kFloat, with_bias);
    std::vector<torch::Tensor> leaves = {in.x, in.residual, in.gamma, in.beta};
    if (with_bias) leaves.push_back(in.bias);
    for (auto& t : leaves) t.requires_grad_(true);
    const auto grad_out = torch::randn(in.x.sizes());
    const auto ours = torch::autograd::grad({add_layer_norm(in.x, in.bias, in.residual, in.gamma, in.beta, 1e-7)},
                                            leaves, {grad_out});
    auto din = to_double(in);
    std::vector<torch::Tensor> dleaves = {din.x, din.residual, din.gamma, din.beta};
    if (with_bias) dleaves.push_back(din.bias);
    for (auto& t : dleaves) t.requires_grad_(true);
    const auto expected = torch::autograd::grad({reference(din, 1e-7)}, dleaves, {grad_out.to(torch::kDouble)});
    for (size_t k = 0; k < leaves.size(); ++k) {
      const double scale = expected[k].abs().max().item<double>();
      const double error = (ours[k].to(torch::kDouble) - expected[k]).abs().max().item<double>() / scale;
      INFO("bias " << with_bias << " input " << k << ": max error relative to the largest entry " << error);
      CHECK(error < 1e-5);
    }
  }
}

TEST_CASE("add_layer_norm passes gradcheck in double", "[ops][layer_norm][gradcheck]") {
  torch::manual_seed(13);
  for (const bool with_bias : {false, true}) {
    auto in = make_inputs(4, 6, torch::kDouble, with_bias);
    auto f = [&](const std::vector<torch::Tensor>& v) {
      return add_layer_norm(v[0], with_bias ? v[4] : torch::Tensor(), v[1], v[2], v[3], 1e-5);
    };
    std::vector<torch::Tensor> inputs = {in.x, in.residual, in.gamma, in.beta};
    std::vector<bool> differentiable = {true, true, true, true};
    if (with_bias) {
      inputs.push_back(in.bias);
      differentiable.push_back(true);
    }
    auto result = mtbert::test::gradcheck(f, inputs, differentiable);
    INFO(result.worst);
    CHECK(result.ok);
    CHECK(torch::allclose(add_layer_norm(in.x, in.bias, in.residual, in.gamma, in.beta, 1e-5), reference(in, 1e-5),
                          1e-12, 1e-12));
  }
}

TEST_CASE("add_layer_norm's per-feature gradients do not depend on the thread count", "[ops][layer_norm]") {
  mtbert::test::RestoreThreadCount restore;
  torch::manual_seed(14);
  auto in = make_inputs(400, 64, torch::kFloat, true);
  for (auto* t : {&in.gamma, &in.beta, &in.bias}) t->requires_grad_(true);
  const auto grad_out = torch::randn(in.x.sizes());
  auto grads = [&](int threads) {
    at::set_num_threads(threads);
    return torch::autograd::grad({add_layer_norm(in.x, in.bias, in.residual, in.gamma, in.beta, 1e-12)},
                                 {in.gamma, in.beta, in.bias}, {grad_out});
  };
  const auto one = grads(1), two = grads(2), three = grads(3);
  for (size_t k = 0; k < one.size(); ++k) {
    CHECK(torch::equal(one[k], two[k]));
    CHECK(torch::equal(one[k], three[k]));
  }
}

TEST_CASE("add_layer_norm builds a graph of its gradient through LibTorch's operators", "[ops][layer_norm]") {
  torch::manual_seed(15);
  auto in = make_inputs(8, 5, torch::kDouble, true);
  in.x.requires_grad_(true);
  auto second = [&](const torch::Tensor& y) {
    auto g = torch::autograd::grad({(y * y).sum()}, {in.x}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
    return torch::autograd::grad({g.sum()}, {in.x})[0];
  };
  CHECK(torch::allclose(second(add_layer_norm(in.x, in.bias, in.residual, in.gamma, in.beta, 1e-5)),
                        second(reference(in, 1e-5)), 1e-9, 1e-9));
}

TEST_CASE("add_layer_norm with x in bf16 is the float kernel on the widened x", "[ops][layer_norm][bf16]") {
  torch::manual_seed(16);
  for (const bool with_bias : {true, false}) {
    auto in = make_inputs(24, 768, torch::kFloat, with_bias);
    auto x = in.x.to(torch::kBFloat16).requires_grad_(true);
    auto residual = in.residual.clone().requires_grad_(true), gamma = in.gamma.clone().requires_grad_(true);
    auto beta = in.beta.clone().requires_grad_(true);
    std::vector<torch::Tensor> wrt = {x, residual, gamma, beta};
    if (with_bias) wrt.push_back(in.bias.clone().requires_grad_(true));
    auto grad_out = torch::randn({6, 4, 768});
    auto y = add_layer_norm(x, with_bias ? wrt[4] : torch::Tensor(), residual, gamma, beta, 1e-12);
    REQUIRE(y.scalar_type() == torch::kFloat);
    auto g = torch::autograd::grad({y}, wrt, {grad_out});
    REQUIRE(g[0].scalar_type() == torch::kBFloat16);

    // The same arithmetic by construction: the float kernel on float(x); the
    // gradient of x rounded to bf16 once, the others float.
    std::vector<torch::Tensor> wrt_float = {x.detach().to(torch::kFloat).requires_grad_(true)};
    for (size_t k = 1; k < wrt.size(); ++k) wrt_float.push_back(wrt[k].detach().clone().requires_grad_(true));
    auto yf = add_layer_norm(wrt_float[0], with_bias ? wrt_float[4] : torch::Tensor(), wrt_float[1], wrt_float[2],
                             wrt_float[3], 1e-12);
    auto gf = torch::autograd::grad({yf}, wrt_float, {grad_out});
    INFO("bias " << with_bias);
    CHECK(torch::equal(y, yf));
    CHECK(torch::equal(g[0], gf[0].to(torch::kBFloat16)));
    for (size_t k = 1; k < g.size(); ++k) CHECK(torch::equal(g[k], gf[k]));

    // Against LayerNorm in double of the same (bf16-rounded) x.
    Inputs exact = to_double({x.detach(), with_bias ? in.bias : torch::Tensor(), in.residual, in.gamma, in.beta});
    CHECK((y.to(torch::kDouble) - reference(exact, 1e-12)).abs().max().item<double>() < 2e-5);
  }
}
