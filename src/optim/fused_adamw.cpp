#include "optim/fused_adamw.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "core/internal_error.h"
#include "core/torch_compat.h"
#include "core/vector_clones.h"

namespace mtbert {

namespace {

constexpr int64_t kGrain = 32768;

bool fusable(const torch::Tensor& t) {
  return !t.is_sparse() && t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.is_contiguous();
}

struct StepScalars {
  float decay;            // 1 - lr * weight_decay (1 without decay)
  float beta1, one_minus_beta1, beta2, one_minus_beta2;
  float sqrt_bias_correction2;
  float eps;
  float neg_step_size;    // -lr / bias_correction1
};

// LibTorch's AdamW::step for elements [0, n) of one parameter, in one pass:
//   p.mul_(decay); m.mul_(b1).add_(g, 1 - b1); v.mul_(b2).addcmul_(g, g, 1 - b2);
//   p.addcdiv_(m, v.sqrt() / sqrt(bc2) + eps, -lr / bc1)
// (vectorized only without errno on sqrt: CMakeLists.txt compiles this file
// with -fno-math-errno, as LibTorch itself is built).
MTBERT_VECTOR_CLONES
void update_chunk(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v, int64_t n,
                  const StepScalars s) {
  for (int64_t i = 0; i < n; ++i) {
    const float grad = g[i];
    const float mi = m[i] * s.beta1 + s.one_minus_beta1 * grad;
    const float vi = v[i] * s.beta2 + s.one_minus_beta2 * (grad * grad);
    m[i] = mi;
    v[i] = vi;
    const float denom = std::sqrt(vi) / s.sqrt_bias_correction2 + s.eps;
    p[i] = p[i] * s.decay + s.neg_step_size * (mi / denom);
  }
}

void fused_update(float* p, const float* g, float* m, float* v, int64_t n, const StepScalars& s) {
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
    update_chunk(p + begin, g + begin, m + begin, v + begin, end - begin, s);
  });
}

}  // namespace

torch::optim::AdamWParamState& FusedAdamW::state_of(const torch::Tensor& p) {
  const auto key = compat::optimizer_state_key(state_, p);
  if (state_.find(key) == state_.end()) {
    auto state = std::make_unique<torch::optim::AdamWParamState>();
    state->step(0);
    state->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    state->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    state_[key] = std::move(state);
  }
  return static_cast<torch::optim::AdamWParamState&>(*state_[key]);
}

void FusedAdamW::create_state() {
  for (auto& group : param_groups_)
    for (auto& p : group.params()) state_of(p);
  create_scalars();
}

void FusedAdamW::create_scalars() {
  if (steps_.defined()) return;
  int64_t count = 0;
  c10::optional<torch::Device> device;
  for (const auto& group : param_groups_) {
    count += static_cast<int64_t>(group.params().size());
    if (!device && !group.params().empty()) device = group.params().front().device();
  }
  const torch::Device on = device.value_or(torch::Device(torch::kCPU));
  steps_ = torch::zeros({count}, torch::TensorOptions().dtype(torch::kFloat).device(on));
  for (int64_t i = 0; i < count; ++i) step_views_.push_back(steps_.select(0, i));
  load_steps_from_state();
  const auto lr_dtype = on.is_cpu() ? torch::kDouble : torch::kFloat;
  for (const auto& group : param_groups_) {
    lr_values_.push_back(group.options().get_lr());
    lrs_.push_back(torch::full({}, lr_values_.back(), torch::TensorOptions().dtype(lr_dtype).device(on)));
  }
}

void FusedAdamW::load_steps_from_state() {
  std::vector<float> steps;
  for (const auto& group : param_groups_) {
    for (const auto& p : group.params()) {
      const auto it = state_.find(compat::optimizer_state_key(state_, p));
      steps.push_back(it == state_.end()
                          ? 0.0f
                          : static_cast<float>(static_cast<const torch::optim::AdamWParamState&>(*it->second).step()));
    }
  }
  check_invariant(static_cast<int64_t>(steps.size()) == steps_.numel(),
                  "FusedAdamW: {} parameters, {} step counts (a group added after the first step?)", steps.size(),
                  steps_.numel());
  steps_.copy_(torch::tensor(steps, torch::kFloat));
}

void FusedAdamW::sync_state_steps() const {
  if (!steps_.defined()) return;
  const auto steps = steps_.to(torch::kCPU);
  const float* count = steps.data_ptr<float>();
  for (const auto& group : param_groups_) {
    for (const auto& p : group.params()) {
      // The map's entries are not const in a const optimizer: the step count
      // written is the one the tensors already hold.
      const auto it = state_.find(compat::optimizer_state_key(state_, p));
      if (it != state_.end())
        static_cast<torch::optim::AdamWParamState&>(*it->second).step(static_cast<int64_t>(*count));
      ++count;
    }
  }
}

void FusedAdamW::set_lr(size_t group, double lr) {
  create_scalars();
  check_invariant(group < param_groups_.size(), "FusedAdamW::set_lr: no group {}", group);
  param_groups_[group].options().set_lr(lr);
  lrs_[group].fill_(lr);
  lr_values_[group] = lr;
}

void FusedAdamW::check_lrs_set() const {
  for (size_t g = 0; g < param_groups_.size(); ++g)
    check_invariant(param_groups_[g].options().get_lr() == lr_values_[g],
                    "FusedAdamW: group {}'s LR {} was set on its options, not with set_lr (the step reads {})", g,
                    param_groups_[g].options().get_lr(), lr_values_[g]);
}

void FusedAdamW::save(torch::serialize::OutputArchive& archive) const {
  sync_state_steps();
  AdamW::save(archive);
}

void FusedAdamW::load(torch::serialize::InputArchive& archive) {
  AdamW::load(archive);
  // The loaded options' LRs and states' steps replace those the tensors hold.
  create_scalars();
  load_steps_from_state();
  for (size_t g = 0; g < param_groups_.size(); ++g) set_lr(g, param_groups_[g].options().get_lr());
}

namespace {

enum class StepPath { fused, device, adamw };

// Which step serves this state of the parameters: fused when every parameter
// with a gradient (and its moments) is a contiguous float32 CPU tensor,
// device when they are dense tensors on one GPU, AdamW's own otherwise.
template <class Groups, class FindState>
StepPath step_path(const Groups& groups, const FindState& find_state) {
  bool all_fusable = true, one_gpu = true;
  c10::optional<torch::Device> device;
  for (const auto& group : groups) {
    if (static_cast<const torch::optim::AdamWOptions&>(group.options()).amsgrad()) return StepPath::adamw;
    for (const auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (p.grad().is_sparse()) return StepPath::adamw;
      std::vector<torch::Tensor> tensors{p, p.grad()};
      if (const auto* state = find_state(p)) tensors.insert(tensors.end(), {state->exp_avg(), state->exp_avg_sq()});
      for (const auto& t : tensors) {
        all_fusable = all_fusable && fusable(t);
        one_gpu = one_gpu && t.is_cuda() && (!device || t.device() == *device);
        if (!device) device = t.device();
      }
    }
  }
  if (all_fusable) return StepPath::fused;
  return one_gpu ? StepPath::device : StepPath::adamw;
}

}  // namespace

void FusedAdamW::device_step() {
  // In-place updates of leaf parameters: LibTorch 2.x refuses them under
  // autograd (1.13's foreach kernels did not check), and the tests call this
  // step directly.
  torch::NoGradGuard no_grad;
  create_scalars();
  check_lrs_set();
  size_t index = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& group = param_groups_[g];
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
    const double beta1 = std::get<0>(options.betas()), beta2 = std::get<1>(options.betas());
    std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
    for (auto& p : group.params()) {
      const size_t i = index++;
      if (!p.grad().defined()) continue;
      auto& state = state_of(p);
      params.push_back(p);
      grads.push_back(p.grad());
      exp_avgs.push_back(state.exp_avg());
      exp_avg_sqs.push_back(state.exp_avg_sq());
      steps.push_back(step_views_[i]);
    }
    if (params.empty()) continue;
    at::_foreach_add_(steps, 1);
    const torch::Tensor& lr = lrs_[g];
    if (compat::fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, steps, lr, beta1, beta2, options.weight_decay(),
                             options.eps()))
      continue;
    // AdamW::step's operations, with the bias corrections, the decay and the
    // step size as 0-d tensors.
    const torch::Tensor decay = options.weight_decay() != 0 ? 1 - lr * options.weight_decay() : torch::Tensor();
    for (size_t k = 0; k < params.size(); ++k) {
      const auto bias_correction1 = 1 - torch::pow(beta1, steps[k]);
      const auto sqrt_bias_correction2 = (1 - torch::pow(beta2, steps[k])).sqrt();
      if (decay.defined()) params[k].mul_(decay);
      exp_avgs[k].mul_(beta1).add_(grads[k], 1 - beta1);
      exp_avg_sqs[k].mul_(beta2).addcmul_(grads[k], grads[k], 1 - beta2);
      const auto denom = (exp_avg_sqs[k].sqrt() / sqrt_bias_correction2).add_(options.eps());
      params[k].sub_(exp_avgs[k] / denom * (lr / bias_correction1));
    }
  }
}

torch::Tensor FusedAdamW::step(LossClosure closure) {
  create_scalars();
  const auto find_state = [&](const torch::Tensor& p) -> const torch::optim::AdamWParamState* {
    const auto it = state_.find(compat::optimizer_state_key(state_, p));
    return it == state_.end() ? nullptr : static_cast<const torch::optim::AdamWParamState*>(it->second.get());
  };
  const StepPath path = step_path(param_groups_, find_state);
  if (path == StepPath::adamw) {
    // AdamW's step counts on the host: brought up to date before, read back after.
    sync_state_steps();
    auto loss = AdamW::step(closure);
    load_steps_from_state();
    return loss;
  }

  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  if (path == StepPath::device) {
    device_step();
    return loss;
  }
  // The CPU: the scalars are read from the step and LR tensors in memory (no
  // host round trip to wait for), the bias corrections computed in double as
  // AdamW does.
  check_lrs_set();
  if (!steps_.is_cpu())
    throw InternalError(fmt::format("FusedAdamW: the step counts are on {}, the parameters on the CPU (moved after "
                                    "the first step?)", steps_.device().str()));
  float* steps = steps_.data_ptr<float>();
  size_t index = 0;
  for (size_t g = 0; g < param_groups_.size(); ++g) {
    auto& group = param_groups_[g];
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
    const double beta1 = std::get<0>(options.betas()), beta2 = std::get<1>(options.betas());
    const double lr = *lrs_[g].data_ptr<double>();
    for (auto& p : group.params()) {
      const size_t i = index++;
      if (!p.grad().defined()) continue;
      auto& state = state_of(p);
      const double step = steps[i] += 1.0f;
      const double bias_correction1 = 1 - std::pow(beta1, step);
      const double bias_correction2 = 1 - std::pow(beta2, step);
      const StepScalars s{
          options.weight_decay() != 0 ? static_cast<float>(1 - lr * options.weight_decay()) : 1.0f,
          static_cast<float>(beta1),
          static_cast<float>(1 - beta1),
          static_cast<float>(beta2),
          static_cast<float>(1 - beta2),
          static_cast<float>(std::sqrt(bias_correction2)),
          static_cast<float>(options.eps()),
          static_cast<float>(-lr / bias_correction1)};
      fused_update(p.data_ptr<float>(), p.grad().data_ptr<float>(), state.exp_avg().data_ptr<float>(),
                   state.exp_avg_sq().data_ptr<float>(), p.numel(), s);
    }
  }
  return loss;
}

}  // namespace mtbert
