// Gradients kept and zeroed in place against gradients set to none: AdamW
// sees the same gradients either way (a parameter the step's backward did
// not reach has none), so the two take the same steps bit for bit, while
// the kept buffers stay where they are.
#include "optim/kept_gradients.h"

#include <torch/torch.h>

#include "optim/fused_adamw.h"
#include "support/test_support.h"

using mtbert::FusedAdamW;
using mtbert::KeptGradients;

namespace {

// A shared weight and two heads; step k trains head k % 2 only, as a
// multi-task step that sampled one task.
struct Run {
  std::vector<torch::Tensor> params;
  std::unique_ptr<FusedAdamW> optimizer;
  std::unique_ptr<KeptGradients> gradients;

  // `kept`: through KeptGradients; otherwise set to none after each step.
  explicit Run(bool kept) {
    torch::manual_seed(5);
    for (int i = 0; i < 3; ++i) params.push_back(torch::randn({6}).requires_grad_(true));
    optimizer = std::make_unique<FusedAdamW>(params, torch::optim::AdamWOptions(1e-2).weight_decay(0.1));
    optimizer->create_state();
    if (kept) gradients = std::make_unique<KeptGradients>(params);
  }

  // Returns whether the head the step left out had a gradient when AdamW ran.
  bool step(int k) {
    torch::manual_seed(100 + k);
    const auto x = torch::randn({6});
    ((params[0] + params[1 + k % 2]) * x).pow(2).sum().backward();
    if (gradients) gradients->set_aside_unreached();
    const bool other_has_gradient = params[1 + (k + 1) % 2].grad().defined();
    optimizer->step();
    if (gradients) gradients->clear();
    else
      for (auto& p : params) p.mutable_grad().reset();
    return other_has_gradient;
  }
};

}  // namespace

TEST_CASE("kept gradients step as gradients set to none do, in the same buffers", "[optim]") {
  Run kept(true), dropped(false);
  std::vector<const void*> buffers;
  for (int k = 0; k < 5; ++k) {
    const auto before = kept.params[1 + (k + 1) % 2].detach().clone();
    CHECK_FALSE(kept.step(k));
    CHECK_FALSE(dropped.step(k));
    // The head left out is not moved (no decay, no momentum).
    CHECK(torch::equal(kept.params[1 + (k + 1) % 2], before));
    for (size_t i = 0; i < kept.params.size(); ++i) {
      INFO("step " << k << ", parameter " << i);
      CHECK(torch::equal(kept.params[i], dropped.params[i]));
      CHECK_FALSE(dropped.params[i].grad().defined());
    }
    if (k == 1) {  // every parameter has had a gradient: the buffers from now on
      for (const auto& p : kept.params) buffers.push_back(p.grad().data_ptr());
    }
    if (k > 1) {
      for (size_t i = 0; i < kept.params.size(); ++i) {
        CHECK(kept.params[i].grad().data_ptr() == buffers[i]);
        CHECK(kept.params[i].grad().eq(0).all().item<bool>());
      }
    }
  }
}

TEST_CASE("a gradient made for a parameter set aside replaces the one set aside", "[optim]") {
  auto p = torch::randn({3}).requires_grad_(true);
  KeptGradients gradients({p});
  (p * 2).sum().backward();
  gradients.clear();
  gradients.set_aside_unreached();  // no pass reached it this time
  CHECK_FALSE(p.grad().defined());
  p.mutable_grad() = torch::ones_like(p);  // as PCGrad or the data-parallel reducer do
  gradients.clear();
  REQUIRE(p.grad().defined());
  CHECK(p.grad().eq(0).all().item<bool>());
}

// A pass replayed from a CUDA graph runs no hooks: the record its capture
// took is marked again, and the step sets aside what it would have.
TEST_CASE("the record of reached parameters is taken apart and marked again", "[optim]") {
  auto a = torch::randn({3}).requires_grad_(true);
  auto b = torch::randn({3}).requires_grad_(true);
  KeptGradients gradients({a, b});
  (a * b).sum().backward();  // both get gradients, kept from now on
  gradients.clear();

  (a * 2).sum().backward();  // an earlier pass of the step reaches a
  const auto earlier = gradients.take_reached();
  CHECK(earlier == std::vector<char>{1, 0});
  (b * 3).sum().backward();  // the "captured" pass reaches b
  const auto own = gradients.take_reached();
  CHECK(own == std::vector<char>{0, 1});
  gradients.mark_reached(earlier);
  gradients.set_aside_unreached();
  CHECK(a.grad().defined());
  CHECK_FALSE(b.grad().defined());  // the record says only a: b is set aside
  gradients.clear();

  gradients.mark_reached(own);  // a "replay" of the pass that reached b
  gradients.set_aside_unreached();
  CHECK_FALSE(a.grad().defined());
  REQUIRE(b.grad().defined());
  gradients.zero();
  gradients.give_back();  // clear() in its two halves
  REQUIRE(a.grad().defined());
  CHECK(a.grad().eq(0).all().item<bool>());
  CHECK(b.grad().eq(0).all().item<bool>());
}
