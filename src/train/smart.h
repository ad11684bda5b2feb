#pragma once
// SMART (Jiang et al. 2020) smoothness-inducing adversarial regularization on
// the embedding output, its Bregman proximal point term with a momentum
// teacher, and SiFT (He et al., DeBERTa) perturbation of the normalized
// embedding sum. Set per task.
//
// SMART, per segment s with embedding output e_s (embed(), the clean pass's):
//   delta_s ~ N(0, sigma^2), every element (padding positions too: they
//     cannot change any output)
//   K times:
//     L   = B * divergence(f(e + delta), f(x))   f(x) detached, e detached;
//                                                the batch SUM, as in the
//                                                public code, so a token's
//                                                gradient does not shrink with
//                                                the batch size
//     g_s = dL / d delta_s
//     update: projected (the paper's Algorithm 1: normalized ascent, then the
//       projection onto the l_inf ball of radius r, the paper's epsilon):
//         delta_s = clamp(delta_s + eta * g_s / (max |g_s| + epsilon), -r, r)
//       with the max over the example's whole embedding matrix (the paper's
//       ||g||_inf of x_i);
//     update: normalized (smart-pytorch, and mt-dnn's SmartPerturbation since
//       2021, the public code the final report used): no projection; the
//       whole perturbation is renormalized per token,
//         delta_s = (delta_s + eta g_s) / (max_h |delta_s + eta g_s| + epsilon)
//       which puts every token's delta at l_inf norm ~1 whatever eta is.
//   regularizer = lambda_s * divergence(f(e + delta), f(x)), delta detached,
//     gradients into the model through e and everything after it, and into
//     the clean outputs f(x).
// epsilon only guards the divisions. As in the public code, dropout stays as
// the model's mode has it: in training, the perturbed passes draw their own
// dropout masks.
//
// Bregman proximal point (the paper's Algorithm 1 with S = 1): a teacher
// theta~ starts as the model before its first step, so the term
// mu * divergence(f(x; theta), f(x; theta~)) acts from the first step, and
// after every optimizer step theta~ = beta theta~ + (1 - beta) theta, with
// beta = momentum (0.99) for the first late_momentum_after (10%) of the
// training steps and late_momentum (0.999) after, as the paper schedules it.
//
// SiFT, as DeBERTa's code does it (DeBERTa/sift/sift.py): per segment with
// embedding sum x (word + token type + position embeddings, the input of the
// embedding LayerNorm), the non-affine LayerNorm n = (x - mean) / s, s =
// sqrt(var + 1e-7), detached, is perturbed to n + delta: delta is in units of
// each token's own scale (the scale invariance). DeBERTa feeds n + delta to
// the embedding LayerNorm, and n in the clean pass too; the clean pass here
// is the model's own, so the perturbed pass is fed (n + delta) s + mean =
// x + s delta, which the LayerNorm maps exactly as it maps n + delta (up to
// its eps), and a zero delta is exactly the clean model. delta starts from
// N(0, sigma^2) clamped to [-2 sigma, 2 sigma], takes one ascent step
//   delta += eta * g / (max_h |g| + 1e-6)   per token, no projection,
// and the regularizer is weight * divergence(f(n + delta), f(x)). DeBERTa's
// final divergence is always the symmetric KL (zero for a one-logit
// regression head); here each head's own divergence is used (squared error
// for regression), so SiFT also acts on STS.
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "config/experiment_config.h"
#include "models/multitask_model.h"

namespace mtbert {

// SiFT's fixed constants (DeBERTa's).
constexpr double kSiftLayerNormEps = 1e-7;
constexpr double kSiftStepEpsilon = 1e-6;

// One ascent update of SMART's perturbation (see above), per segment:
// delta [B, N, H] and its gradient.
torch::Tensor smart_ascent_update(const torch::Tensor& delta, const torch::Tensor& grad, const SmartConfig& config);

// lambda_s * divergence(f(x + delta), f(x)) where delta starts from
// N(0, sigma^2) noise and takes K ascent steps (see above);
// `clean_embedded` and `clean_outputs` are embed(x) and f(x) of the same
// forward pass. Returns the weighted regularizer (differentiable w.r.t. the
// model).
torch::Tensor smart_regularizer(MultitaskModel& model, const std::string& task,
                                const std::vector<TokenBatch>& segments,
                                const std::vector<torch::Tensor>& clean_embedded,
                                const torch::Tensor& clean_outputs, const SmartConfig& config);

// The perturbation smart_regularizer uses, one per segment, detached. Draws
// its noise from torch's default generator, one randn_like per segment.
std::vector<torch::Tensor> smart_perturbation(MultitaskModel& model, const std::string& task,
                                              const std::vector<TokenBatch>& segments,
                                              const std::vector<torch::Tensor>& clean_embedded,
                                              const torch::Tensor& clean_outputs, const SmartConfig& config);

// SiFT's regularizer on the same terms (one normalized ascent step).
torch::Tensor sift_regularizer(MultitaskModel& model, const std::string& task,
                               const std::vector<TokenBatch>& segments, const torch::Tensor& clean_outputs,
                               const SiftConfig& config);

// SiFT's perturbation of the normalized embedding sums, one per segment,
// detached; what the model is fed is sift_perturbed_sum(sum, delta).
std::vector<torch::Tensor> sift_perturbation(MultitaskModel& model, const std::string& task,
                                             const std::vector<TokenBatch>& segments,
                                             const torch::Tensor& clean_outputs, const SiftConfig& config);

// sum + s * delta (detached sum; s = sqrt(var + kSiftLayerNormEps) per
// token): the embedding sum that a LayerNorm sees as LN0(sum) + delta.
torch::Tensor sift_perturbed_sum(const torch::Tensor& sum, const torch::Tensor& delta);

// beta for the update after optimizer step `step` (0-based) of
// `total_steps` (see above).
double bregman_momentum(const SmartConfig& config, int64_t step, int64_t total_steps);

// The Bregman proximal point teacher: an exponential moving average of the
// model's parameters, updated after each optimizer step. The teacher is a
// twin of the model in eval mode (no dropout: a fixed target) whose
// parameters never require gradients.
class MomentumTeacher {
 public:
  explicit MomentumTeacher(const MultitaskModel& model);
  // theta_teacher = beta * theta_teacher + (1 - beta) * theta, per parameter;
  // buffers are copied.
  void update(const MultitaskModel& model, double beta);
  // mu * divergence(f(x; theta), f(x; theta_teacher)); the teacher's outputs
  // are computed without gradient.
  torch::Tensor bregman_term(MultitaskModel& model, const std::string& task, const std::vector<TokenBatch>& segments,
                             const torch::Tensor& student_outputs, double weight);

  const MultitaskModel& teacher() const { return teacher_; }
  // For checkpoints: the teacher's parameters and buffers are saved and restored.
  torch::nn::Module* module() { return teacher_.get(); }

 private:
  MultitaskModel teacher_;
};

}  // namespace mtbert
