// FusedAdamW against LibTorch's AdamW: the same trajectory (to float
// rounding) over several steps with HuggingFace-style groups (weight decay or
// not, two learning rates) and a parameter without gradient; the same
// results bit for bit where it defers to AdamW (double parameters, amsgrad);
// checkpoints that load into either class, their step counts included; and
// steps that read no tensor value on the host.
#include <torch/torch.h>

#include <sstream>

#include "core/internal_error.h"
#include "core/op_profile.h"
#include "core/torch_compat.h"
#include "optim/fused_adamw.h"
#include "support/test_support.h"

using mtbert::FusedAdamW;
namespace compat = mtbert::compat;
using torch::optim::AdamW;
using torch::optim::AdamWOptions;
using torch::optim::AdamWParamState;

namespace {

struct Params {
  std::vector<torch::Tensor> decayed, plain, head, unused;
  std::vector<torch::Tensor> all() const {
    std::vector<torch::Tensor> out;
    for (const auto* list : {&decayed, &plain, &head, &unused}) out.insert(out.end(), list->begin(), list->end());
    return out;
  }
};

Params make_params(torch::Dtype dtype) {
  torch::manual_seed(21);
  auto leaf = [&](std::vector<int64_t> shape) { return torch::randn(shape, dtype).requires_grad_(true); };
  // 70001 elements: more than one parallel chunk, and not a multiple of any vector width.
  return Params{{leaf({70001}), leaf({16, 8})}, {leaf({8})}, {leaf({5, 8})}, {leaf({3})}};
}

Params clone_params(const Params& p) {
  auto copy = [](const std::vector<torch::Tensor>& v) {
    std::vector<torch::Tensor> out;
    for (const auto& t : v) out.push_back(t.detach().clone().requires_grad_(true));
    return out;
  };
  return Params{copy(p.decayed), copy(p.plain), copy(p.head), copy(p.unused)};
}

template <typename Optimizer>
std::unique_ptr<Optimizer> make(const Params& p, bool amsgrad = false) {
  auto options = [&](double lr, double wd) {
    return std::make_unique<AdamWOptions>(AdamWOptions(lr).betas({0.9, 0.98}).eps(1e-6).weight_decay(wd).amsgrad(amsgrad));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(p.decayed, options(1e-2, 0.1));
  groups.emplace_back(p.plain, options(1e-2, 0.0));
  std::vector<torch::Tensor> head = p.head;
  head.insert(head.end(), p.unused.begin(), p.unused.end());
  groups.emplace_back(head, options(3e-2, 0.05));
  return std::make_unique<Optimizer>(std::move(groups), AdamWOptions(1e-2));
}

// The same random gradients for both sets (none for `unused`).
void set_gradients(const std::vector<Params*>& sets, int step) {
  torch::manual_seed(100 + step);
  const auto reference = sets[0]->all();
  const size_t with_gradient = reference.size() - sets[0]->unused.size();
  for (size_t i = 0; i < with_gradient; ++i) {
    auto g = torch::randn_like(reference[i]) * (step + 1);
    for (auto* set : sets) set->all()[i].mutable_grad() = g.clone();
  }
}

// A per-step LR change, as the schedule makes: FusedAdamW through set_lr.
void decay_lrs(FusedAdamW& fused, torch::optim::Optimizer& reference) {
  for (size_t g = 0; g < fused.param_groups().size(); ++g)
    fused.set_lr(g, fused.param_groups()[g].options().get_lr() * 0.9);
  for (auto& group : reference.param_groups()) group.options().set_lr(group.options().get_lr() * 0.9);
}

const AdamWParamState& state_of(torch::optim::Optimizer& optimizer, const torch::Tensor& p) {
  return static_cast<AdamWParamState&>(*optimizer.state().at(compat::optimizer_state_key(optimizer.state(), p)));
}

}  // namespace

TEST_CASE("FusedAdamW follows AdamW's trajectory", "[train][optimizer]") {
  Params a = make_params(torch::kFloat), b = clone_params(a);
  auto fused = make<FusedAdamW>(a);
  auto reference = make<AdamW>(b);
  for (int step = 0; step < 6; ++step) {
    set_gradients({&a, &b}, step);
    fused->step();
    reference->step();
    decay_lrs(*fused, *reference);
  }
  const auto pa = a.all(), pb = b.all();
  for (size_t i = 0; i < pa.size(); ++i) {
    INFO("parameter " << i);
    CHECK(torch::allclose(pa[i], pb[i], 1e-6, 1e-7));
  }
  CHECK(torch::equal(a.unused[0], b.unused[0]));  // no gradient: untouched
  fused->sync_state_steps();
  for (size_t i = 0; i < pa.size() - a.unused.size(); ++i) {
    const auto& sa = state_of(*fused, pa[i]);
    const auto& sb = state_of(*reference, pb[i]);
    CHECK(sa.step() == sb.step());
    // Gradients up to ~20 here: a moment that cancels to near zero keeps an
    // absolute rounding difference of a few ulp of the terms.
    INFO("parameter " << i);
    CHECK(torch::allclose(sa.exp_avg(), sb.exp_avg(), 1e-5, 1e-5));
    CHECK(torch::allclose(sa.exp_avg_sq(), sb.exp_avg_sq(), 1e-5, 1e-5));
  }
  CHECK(fused->state().count(compat::optimizer_state_key(fused->state(), a.unused[0])) == 0);
}

// The GPU path, run here on the CPU (where it takes AdamW's operations with
// tensor scalars, at::_fused_adamw_ being CUDA's), with a parameter that skips
// steps (its own step count, so its own bias corrections).
TEST_CASE("FusedAdamW's device step (the GPU path) follows AdamW's trajectory", "[train][optimizer]") {
  Params a = make_params(torch::kFloat), b = clone_params(a);
  auto foreach = make<FusedAdamW>(a);
  auto reference = make<AdamW>(b);
  for (int step = 0; step < 6; ++step) {
    set_gradients({&a, &b}, step);
    if (step % 2 == 1) {  // the plain group's parameter has no gradient every other step
      a.plain[0].mutable_grad().reset();
      b.plain[0].mutable_grad().reset();
    }
    foreach->device_step();
    reference->step();
    decay_lrs(*foreach, *reference);
  }
  const auto pa = a.all(), pb = b.all();
  for (size_t i = 0; i < pa.size(); ++i) {
    INFO("parameter " << i);
    CHECK(torch::allclose(pa[i], pb[i], 1e-6, 1e-7));
  }
  foreach->sync_state_steps();
  for (size_t i = 0; i < pa.size() - a.unused.size(); ++i) {
    const auto& sa = state_of(*foreach, pa[i]);
    const auto& sb = state_of(*reference, pb[i]);
    INFO("parameter " << i);
    CHECK(sa.step() == sb.step());
    CHECK(torch::allclose(sa.exp_avg(), sb.exp_avg(), 1e-5, 1e-5));
  }
}

TEST_CASE("FusedAdamW on CUDA takes the device step and follows AdamW", "[train][optimizer][cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device here");
  Params a = make_params(torch::kFloat), b = clone_params(a);
  for (auto* list : {&a.decayed, &a.plain, &a.head, &a.unused})
    for (auto& t : *list) t = t.detach().to(torch::kCUDA).requires_grad_(true);
  auto foreach = make<FusedAdamW>(a);
  auto reference = make<AdamW>(b);
  for (int step = 0; step < 4; ++step) {
    set_gradients({&b}, step);
    const auto pa = a.all(), pb = b.all();
    for (size_t i = 0; i + a.unused.size() < pa.size(); ++i) pa[i].mutable_grad() = pb[i].grad().to(torch::kCUDA);
    foreach->step();
    reference->step();
    decay_lrs(*foreach, *reference);
  }
  const auto pa = a.all(), pb = b.all();
  for (size_t i = 0; i < pa.size(); ++i) CHECK(torch::allclose(pa[i].cpu(), pb[i], 1e-5, 1e-6));
  foreach->sync_state_steps();
  for (size_t i = 0; i + a.unused.size() < pa.size(); ++i) CHECK(state_of(*foreach, pa[i]).step() == 4);
}

TEST_CASE("FusedAdamW defers to AdamW for double parameters and amsgrad", "[train][optimizer]") {
  for (const bool amsgrad : {false, true}) {
    Params a = make_params(amsgrad ? torch::kFloat : torch::kDouble), b = clone_params(a);
    auto fused = make<FusedAdamW>(a, amsgrad);
    auto reference = make<AdamW>(b, amsgrad);
    for (int step = 0; step < 3; ++step) {
      set_gradients({&a, &b}, step);
      fused->step();
      reference->step();
    }
    const auto pa = a.all(), pb = b.all();
    for (size_t i = 0; i < pa.size(); ++i) CHECK(torch::equal(pa[i], pb[i]));
  }
}

TEST_CASE("FusedAdamW checkpoints load into AdamW and back", "[train][optimizer]") {
  Params a = make_params(torch::kFloat), b = clone_params(a), c = clone_params(a);
  auto fused = make<FusedAdamW>(a);
  set_gradients({&a}, 0);
  fused->step();
  std::stringstream saved;
  {
    torch::serialize::OutputArchive archive;
    fused->save(archive);
    archive.save_to(saved);
  }
  // Two steps on: a fused optimizer continuing, AdamW restored from its checkpoint.
  auto restored = make<AdamW>(b);
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < a.all().size(); ++i) b.all()[i].copy_(a.all()[i]);
  }
  torch::serialize::InputArchive archive;
  archive.load_from(saved);
  restored->load(archive);
  for (int step = 1; step < 3; ++step) {
    set_gradients({&a, &b}, step);
    fused->step();
    restored->step();
  }
  for (size_t i = 0; i < a.all().size(); ++i) CHECK(torch::allclose(a.all()[i], b.all()[i], 1e-6, 1e-7));

  // And an AdamW checkpoint continues in FusedAdamW.
  std::stringstream saved_reference;
  {
    torch::serialize::OutputArchive out;
    restored->save(out);
    out.save_to(saved_reference);
  }
  auto continued = make<FusedAdamW>(c);
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < b.all().size(); ++i) c.all()[i].copy_(b.all()[i]);
  }
  torch::serialize::InputArchive in;
  in.load_from(saved_reference);
  continued->load(in);
  set_gradients({&b, &c}, 3);
  restored->step();
  continued->step();
  for (size_t i = 0; i < b.all().size(); ++i) CHECK(torch::allclose(b.all()[i], c.all()[i], 1e-6, 1e-7));
}

// A run resumed from a checkpoint continues with the step counts it was
// saved with (the bias corrections depend on them), though the step keeps
// them in tensors: the checkpoint holds AdamW's int64 steps.
TEST_CASE("FusedAdamW's step counts survive a checkpoint", "[train][optimizer]") {
  Params a = make_params(torch::kFloat), b = clone_params(a);
  auto straight = make<FusedAdamW>(a);
  straight->create_state();
  for (int step = 0; step < 3; ++step) {
    set_gradients({&a}, step);
    if (step == 1) a.plain[0].mutable_grad().reset();  // one parameter a step behind
    straight->step();
    straight->set_lr(0, 1e-2 * (step + 2));
  }
  std::stringstream saved;
  {
    torch::serialize::OutputArchive archive;
    straight->save(archive);
    archive.save_to(saved);
  }
  CHECK(state_of(*straight, a.decayed[0]).step() == 3);
  CHECK(state_of(*straight, a.plain[0]).step() == 2);
  CHECK(state_of(*straight, a.unused[0]).step() == 0);

  auto resumed = make<FusedAdamW>(b);
  resumed->create_state();
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < a.all().size(); ++i) b.all()[i].copy_(a.all()[i]);
  }
  torch::serialize::InputArchive archive;
  archive.load_from(saved);
  resumed->load(archive);
  // The LRs as the trainer sets them before every step.
  for (size_t g = 0; g < straight->param_groups().size(); ++g)
    resumed->set_lr(g, straight->param_groups()[g].options().get_lr());
  for (int step = 3; step < 5; ++step) {
    set_gradients({&a, &b}, step);
    straight->step();
    resumed->step();
  }
  for (size_t i = 0; i < a.all().size(); ++i) CHECK(torch::equal(a.all()[i], b.all()[i]));
}

TEST_CASE("FusedAdamW refuses an LR set on a group's options alone", "[train][optimizer]") {
  Params a = make_params(torch::kFloat);
  auto fused = make<FusedAdamW>(a);
  fused->create_state();
  set_gradients({&a}, 0);
  fused->param_groups()[1].options().set_lr(0.5);
  CHECK_THROWS_AS(fused->step(), mtbert::InternalError);
}

// What a CUDA graph could not capture and what would stall a GPU's queue:
// operators that hand a tensor's value to the host. The step counts and LRs
// stay tensors on both paths.
TEST_CASE("FusedAdamW's steps read no tensor value on the host", "[train][optimizer]") {
  Params a = make_params(torch::kFloat);
  auto fused = make<FusedAdamW>(a);
  fused->create_state();
  set_gradients({&a}, 0);
  const auto steps = [&] {
    fused->set_lr(0, 1e-3);
    fused->step();
    fused->device_step();
  };
  steps();
  for (const auto& op : mtbert::profile_ops(steps, 2)) {
    INFO(op.op);
    CHECK(op.op != "aten::_local_scalar_dense");
    CHECK(op.op != "aten::item");
    CHECK(op.op != "aten::is_nonzero");
  }
}
