#include "optim/fused_adamw.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>

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

torch::Tensor FusedAdamW::step(LossClosure closure) {
  for (const auto& group : param_groups_) {
    if (static_cast<const torch::optim::AdamWOptions&>(group.options()).amsgrad()) return AdamW::step(closure);
    for (const auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (!fusable(p) || !fusable(p.grad())) return AdamW::step(closure);
      const auto it = state_.find(compat::optimizer_state_key(state_, p));
      if (it == state_.end()) continue;
      const auto& state = static_cast<const torch::optim::AdamWParamState&>(*it->second);
      if (!fusable(state.exp_avg()) || !fusable(state.exp_avg_sq())) return AdamW::step(closure);
    }
  }

  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
    const double beta1 = std::get<0>(options.betas()), beta2 = std::get<1>(options.betas());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      const auto key = compat::optimizer_state_key(state_, p);
      if (state_.find(key) == state_.end()) {
        auto state = std::make_unique<torch::optim::AdamWParamState>();
        state->step(0);
        state->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        state->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        state_[key] = std::move(state);
      }
      auto& state = static_cast<torch::optim::AdamWParamState&>(*state_[key]);
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
