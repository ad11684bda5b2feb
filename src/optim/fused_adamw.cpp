#include "optim/fused_adamw.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <map>
#include <vector>

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
}

namespace {

enum class StepPath { fused, foreach, adamw };

// Which step serves this state of the parameters: fused when every parameter
// with a gradient (and its moments) is a contiguous float32 CPU tensor,
// foreach when they are dense tensors on one GPU, AdamW's own otherwise.
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
  return one_gpu ? StepPath::foreach : StepPath::adamw;
}

}  // namespace

void FusedAdamW::foreach_step() {
  // In-place updates of leaf parameters: LibTorch 2.x refuses them under
  // autograd (1.13's foreach kernels did not check), and the tests call this
  // step directly.
  torch::NoGradGuard no_grad;
  for (auto& group : param_groups_) {
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
    const double beta1 = std::get<0>(options.betas()), beta2 = std::get<1>(options.betas());
    // Parameters that share a step count share the bias corrections.
    std::map<int64_t, std::vector<torch::Tensor>> by_step;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& state = state_of(p);
      state.step(state.step() + 1);
      by_step[state.step()].push_back(p);
    }
    for (const auto& [step, params] : by_step) {
      std::vector<torch::Tensor> grads, exp_avgs, exp_avg_sqs;
      for (const auto& p : params) {
        auto& state = state_of(p);
        grads.push_back(p.grad());
        exp_avgs.push_back(state.exp_avg());
        exp_avg_sqs.push_back(state.exp_avg_sq());
      }
      const double bias_correction1 = 1 - std::pow(beta1, step);
      const double bias_correction2 = 1 - std::pow(beta2, step);
      if (options.weight_decay() != 0) at::_foreach_mul_(params, 1 - options.lr() * options.weight_decay());
      at::_foreach_mul_(exp_avgs, beta1);
      at::_foreach_add_(exp_avgs, grads, 1 - beta1);
      at::_foreach_mul_(exp_avg_sqs, beta2);
      at::_foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2);
      std::vector<torch::Tensor> denom = at::_foreach_sqrt(exp_avg_sqs);
      at::_foreach_div_(denom, std::sqrt(bias_correction2));
      at::_foreach_add_(denom, options.eps());
      at::_foreach_addcdiv_(params, exp_avgs, denom, -options.lr() / bias_correction1);
    }
  }
}

torch::Tensor FusedAdamW::step(LossClosure closure) {
  const auto find_state = [&](const torch::Tensor& p) -> const torch::optim::AdamWParamState* {
    const auto it = state_.find(compat::optimizer_state_key(state_, p));
    return it == state_.end() ? nullptr : static_cast<const torch::optim::AdamWParamState*>(it->second.get());
  };
  const StepPath path = step_path(param_groups_, find_state);
  if (path == StepPath::adamw) return AdamW::step(closure);

  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  if (path == StepPath::foreach) {
    foreach_step();
    return loss;
  }
  for (auto& group : param_groups_) {
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
    const double beta1 = std::get<0>(options.betas()), beta2 = std::get<1>(options.betas());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& state = state_of(p);
      state.step(state.step() + 1);
      const double bias_correction1 = 1 - std::pow(beta1, state.step());
      const double bias_correction2 = 1 - std::pow(beta2, state.step());
      const StepScalars s{
          options.weight_decay() != 0 ? static_cast<float>(1 - options.lr() * options.weight_decay()) : 1.0f,
          static_cast<float>(beta1),
          static_cast<float>(1 - beta1),
          static_cast<float>(beta2),
          static_cast<float>(1 - beta2),
          static_cast<float>(std::sqrt(bias_correction2)),
          static_cast<float>(options.eps()),
          static_cast<float>(-options.lr() / bias_correction1)};
      fused_update(p.data_ptr<float>(), p.grad().data_ptr<float>(), state.exp_avg().data_ptr<float>(),
                   state.exp_avg_sq().data_ptr<float>(), p.numel(), s);
    }
  }
  return loss;
}

}  // namespace mtbert
