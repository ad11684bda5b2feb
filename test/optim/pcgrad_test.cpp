// PCGrad against hand-computed 2- and 3-task examples (the arithmetic is in
// the comments), and the accumulator on a tiny real model against the surgery
// applied to gradients computed separately.
#include <random>

#include <torch/torch.h>

#include "models/multitask_model.h"
#include "optim/pcgrad.h"
#include "support/test_support.h"
#include "support/tiny_multitask.h"

using namespace mtbert;
using mtbert::test::head_spec;
using mtbert::test::tiny_batch;
using mtbert::test::tiny_config;
using mtbert::test::tiny_encoder;

namespace {

torch::Tensor vec(std::initializer_list<double> values) { return torch::tensor(std::vector<double>(values), torch::kDouble); }

void check_close(const torch::Tensor& actual, const torch::Tensor& expected, double tol = 1e-12) {
  INFO("actual " << actual << "\nexpected " << expected);
  CHECK(torch::allclose(actual, expected, 0, tol));
}

// Flattened, with zeros for parameters that got no gradient (the pooler, unused by cls pooling).
torch::Tensor flat(const std::vector<torch::Tensor>& tensors, const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> parts;
  for (size_t i = 0; i < params.size(); ++i)
    parts.push_back(tensors[i].defined() ? tensors[i].reshape({-1}) : torch::zeros({params[i].numel()}));
  return torch::cat(parts);
}

torch::Tensor flat_grad(const torch::Tensor& loss, const std::vector<torch::Tensor>& params) {
  return flat(torch::autograd::grad({loss}, params, {}, false, false, /*allow_unused=*/true), params);
}

}  // namespace

TEST_CASE("PCGrad leaves non-conflicting gradients unchanged", "[train][pcgrad]") {
  // g1 = (1, 2), g2 = (3, -1): g1 . g2 = 3 - 2 = 1 >= 0, no projection.
  // sum = (4, 1), mean = (2, 0.5).
  std::mt19937_64 rng(1);
  std::vector<torch::Tensor> g = {vec({1, 2}), vec({3, -1})};
  check_close(pcgrad_combine(g, PcgradReduction::sum, rng), vec({4, 1}));
  check_close(pcgrad_combine(g, PcgradReduction::mean, rng), vec({2, 0.5}));
  // Orthogonal gradients do not conflict either: (1, 0), (0, 1) -> (1, 1).
  check_close(pcgrad_combine({vec({1, 0}), vec({0, 1})}, PcgradReduction::sum, rng), vec({1, 1}));
}

TEST_CASE("PCGrad makes two conflicting gradients orthogonal", "[train][pcgrad]") {
  // g1 = (1, 0), g2 = (-1, 1): g1 . g2 = -1 < 0.
  // g1' = g1 - (-1 / |g2|^2) g2 = (1, 0) + 1/2 (-1, 1) = (1/2, 1/2);   g1' . g2 = -1/2 + 1/2 = 0
  // g2' = g2 - (-1 / |g1|^2) g1 = (-1, 1) + (1, 0)     = (0, 1);       g2' . g1 = 0
  // sum = (1/2, 3/2); mean = sum / 2 = (1/4, 3/4).
  std::mt19937_64 rng(7);
  std::vector<torch::Tensor> g = {vec({1, 0}), vec({-1, 1})};
  check_close(pcgrad_combine(g, PcgradReduction::sum, rng), vec({0.5, 1.5}));
  check_close(pcgrad_combine(g, PcgradReduction::mean, rng), vec({0.25, 0.75}));

  // The same in 50 dimensions, against the projections written out here.
  torch::manual_seed(11);
  auto a = torch::randn({50}, torch::kDouble);
  auto b = -a + 0.5 * torch::randn({50}, torch::kDouble);
  REQUIRE(torch::dot(a, b).item<double>() < 0);
  auto a_pc = a - torch::dot(a, b) / torch::dot(b, b) * b;
  auto b_pc = b - torch::dot(b, a) / torch::dot(a, a) * a;
  CHECK(torch::dot(a_pc, b).item<double>() == Approx(0).margin(1e-12));
  CHECK(torch::dot(b_pc, a).item<double>() == Approx(0).margin(1e-12));
  check_close(pcgrad_combine({a, b}, PcgradReduction::sum, rng), a_pc + b_pc);
  check_close(pcgrad_combine({a, b}, PcgradReduction::mean, rng), (a_pc + b_pc) / 2);
}

TEST_CASE("PCGrad with three tasks depends on the order", "[train][pcgrad]") {
  // g0 = (2, 0), g1 = (-1, 1), g2 = (0, -1). Dots: g0.g1 = -2, g0.g2 = 0, g1.g2 = -1.
  // Task 0, order (1, 2): g0.g1 = -2 -> g = (2, 0) + 2/2 (-1, 1) = (1, 1); g.g2 = -1 -> g = (1, 1) + 1/1 (0, -1) = (1, 0)
  // Task 0, order (2, 1): g0.g2 = 0 (no conflict); g0.g1 = -2 -> g = (1, 1)
  // Task 1, order (0, 2): g1.g0 = -2 -> g = (-1, 1) + 2/4 (2, 0) = (0, 1); g.g2 = -1 -> g = (0, 1) + (0, -1) = (0, 0)
  // Task 1, order (2, 0): g1.g2 = -1 -> g = (-1, 1) + (0, -1) = (-1, 0); g.g0 = -2 -> g = (-1, 0) + 2/4 (2, 0) = (0, 0)
  // Task 2, order (0, 1): g2.g0 = 0; g2.g1 = -1 -> g = (0, -1) + 1/2 (-1, 1) = (-1/2, -1/2)
  // Task 2, order (1, 0): g2.g1 = -1 -> g = (-1/2, -1/2); g.g0 = -1 -> g = (-1/2, -1/2) + 1/4 (2, 0) = (0, -1/2)
  std::vector<torch::Tensor> g = {vec({2, 0}), vec({-1, 1}), vec({0, -1})};
  // (1, 0) + (0, 0) + (-1/2, -1/2) = (1/2, -1/2)
  check_close(pcgrad_combine(g, {{1, 2}, {0, 2}, {0, 1}}, PcgradReduction::sum), vec({0.5, -0.5}));
  // (1, 1) + (0, 0) + (0, -1/2) = (1, 1/2); mean (1/3, 1/6)
  check_close(pcgrad_combine(g, {{2, 1}, {2, 0}, {1, 0}}, PcgradReduction::sum), vec({1, 0.5}));
  check_close(pcgrad_combine(g, {{2, 1}, {2, 0}, {1, 0}}, PcgradReduction::mean), vec({1.0 / 3, 1.0 / 6}));
  // (1, 1) + (0, 0) + (-1/2, -1/2) = (1/2, 1/2)
  check_close(pcgrad_combine(g, {{2, 1}, {0, 2}, {0, 1}}, PcgradReduction::sum), vec({0.5, 0.5}));

  // The random version is the ordered one with the orders its generator draws,
  // and a fixed seed gives a fixed result.
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    std::mt19937_64 r1(seed), r2(seed), r3(seed);
    auto orders = pcgrad_orders(3, r2);
    for (int64_t i = 0; i < 3; ++i) {
      auto sorted = orders[i];
      std::sort(sorted.begin(), sorted.end());
      std::vector<int64_t> others;
      for (int64_t j = 0; j < 3; ++j)
        if (j != i) others.push_back(j);
      CHECK(sorted == others);
    }
    auto random = pcgrad_combine(g, PcgradReduction::sum, r1);
    check_close(random, pcgrad_combine(g, orders, PcgradReduction::sum));
    check_close(random, pcgrad_combine(g, PcgradReduction::sum, r3));
  }
  // Over many draws every order of the two other tasks turns up.
  std::mt19937_64 rng(42);
  std::set<std::vector<int64_t>> seen;
  for (int k = 0; k < 64; ++k) seen.insert(pcgrad_orders(3, rng)[0]);
  CHECK(seen.size() == 2);
}

TEST_CASE("PcgradAccumulator on a tiny model matches the surgery on separately computed gradients",
          "[train][pcgrad]") {
  torch::manual_seed(21);
  MultitaskModel model(tiny_encoder(tiny_config()),
                       std::vector<HeadSpec>{head_spec("sst", TaskTarget::classes, 3), head_spec("sts", TaskTarget::regression)});
  model->eval();
  auto shared = model->shared_parameters();
  auto batch_a = tiny_batch(4, 6);
  auto batch_b = tiny_batch(4, 5);
  auto labels_a = torch::tensor({0.f, 1.f, 2.f, 1.f});
  auto loss_a = [&] { return model->head("sst")->loss(model->forward("sst", {batch_a}), labels_a); };

  // STS labels chosen (first seed that works) so that the two tasks conflict.
  torch::Tensor labels_b, grad_a, grad_b;
  auto loss_b = [&] { return model->head("sts")->loss(model->forward("sts", {batch_b}), labels_b); };
  grad_a = flat_grad(loss_a(), shared);
  bool conflict = false;
  for (int seed = 0; seed < 50 && !conflict; ++seed) {
    torch::manual_seed(seed);
    labels_b = torch::randn({4}) * 5;
    grad_b = flat_grad(loss_b(), shared);
    conflict = torch::dot(grad_a, grad_b).item<double>() < 0;
  }
  REQUIRE(conflict);
  auto head_a_grad = torch::autograd::grad({loss_a()}, model->task_parameters("sst"));
  auto head_b_grad = torch::autograd::grad({loss_b()}, model->task_parameters("sts"));

  PcgradAccumulator accumulator(shared);
  for (auto reduction : {PcgradReduction::sum, PcgradReduction::mean}) {
    model->zero_grad();
    loss_a().backward();
    accumulator.capture_task_gradient();
    for (const auto& p : shared)  // zeroed for the next task
      if (p.grad().defined()) CHECK(p.grad().abs().max().item<double>() == 0.0);
    loss_b().backward();
    accumulator.capture_task_gradient();
    std::mt19937_64 rng(5), rng_expected(5);
    accumulator.apply(reduction, rng);
    CHECK(accumulator.last_conflicts() == 1);

    auto expected = pcgrad_combine({grad_a, grad_b}, reduction, rng_expected);
    std::vector<torch::Tensor> grads;
    for (const auto& p : shared) grads.push_back(p.grad());
    CHECK(torch::allclose(flat(grads, shared), expected, 1e-5, 1e-6));
    // The surgery changed something: the plain sum is different.
    CHECK(!torch::allclose(flat(grads, shared), grad_a + grad_b, 1e-3, 1e-4));

    // Task-specific parameters keep their own task's gradient.
    auto own_a = model->task_parameters("sst");
    auto own_b = model->task_parameters("sts");
    for (size_t i = 0; i < own_a.size(); ++i) CHECK(torch::allclose(own_a[i].grad(), head_a_grad[i]));
    for (size_t i = 0; i < own_b.size(); ++i) CHECK(torch::allclose(own_b[i].grad(), head_b_grad[i]));
  }
}

TEST_CASE("PcgradAccumulator leaves frozen parameters out", "[train][pcgrad]") {
  torch::manual_seed(22);
  MultitaskModel model(tiny_encoder(tiny_config(1)), std::vector<HeadSpec>{head_spec("sst", TaskTarget::classes, 3)});
  auto frozen = model->bert->embeddings->word_embeddings->weight;
  frozen.requires_grad_(false);
  PcgradAccumulator accumulator(model->shared_parameters());
  auto batch = tiny_batch(2, 4);
  model->head("sst")->loss(model->forward("sst", {batch}), torch::tensor({0.f, 2.f})).backward();
  accumulator.capture_task_gradient();
  std::mt19937_64 rng(1);
  accumulator.apply(PcgradReduction::sum, rng);
  CHECK(!frozen.grad().defined());
  CHECK(model->bert->embeddings->LayerNorm->weight.grad().defined());

  // A wholly frozen encoder leaves nothing to combine: the heads keep their gradients.
  model->freeze_encoder();
  model->zero_grad();
  PcgradAccumulator nothing_shared(model->shared_parameters());
  model->head("sst")->loss(model->forward("sst", {batch}), torch::tensor({0.f, 2.f})).backward();
  auto head_grad = model->head("sst")->classifier->weight.grad().clone();
  nothing_shared.capture_task_gradient();
  nothing_shared.apply(PcgradReduction::mean, rng);
  CHECK(nothing_shared.last_conflicts() == 0);
  CHECK(torch::equal(model->head("sst")->classifier->weight.grad(), head_grad));
}
