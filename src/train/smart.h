#pragma once
// SMART (Jiang et al. 2020) smoothness-inducing adversarial regularization on
// the embedding output, its Bregman proximal point term with a momentum
// teacher, and SiFT (He et al., DeBERTa) perturbation of the layer-normalized
// word embeddings. Set per task.
//
// SMART, per segment s with embedding output e_s (embed(), the clean pass's):
//   delta_s ~ N(0, sigma^2), every element (padding positions too: they
//     cannot change any output)
//   K times:
//     L   = B * divergence(f(e + delta), f(x))   f(x) detached, e detached;
//                                                the batch SUM, as in the
//                                                public code, so a token's
//                                                gradient does not shrink with
//                                                the batch size next to epsilon
//     g_s = dL / d delta_s
//     delta_s += eta * g_s / (max_h |g_s| + epsilon)   per token: the max runs
//                                                over the hidden dimension
//     delta_s = clamp(delta_s, -radius, radius)        only when radius > 0
//   regularizer = lambda_s * divergence(f(e + delta), f(x)), delta detached,
//     gradients into the model through e and everything after it, and into
//     the clean outputs f(x).
// epsilon only stabilizes the normalization: a token whose gradient is far
// below epsilon moves by eta * max|g| / epsilon (less than eta) instead of a
// full step, and a token without gradient (padding) does not move.
//
// How this relates to the public code: the step is the paper's (Algorithm 1),
// and that of mt-dnn's SmartPerturbation as released with the paper (2020)
// and of DeBERTa's SiFT. mt-dnn's later version and smart-pytorch instead
// renormalize the whole perturbation, delta = (delta + eta g) / (max|delta +
// eta g| + epsilon), which puts every token's delta at l_inf norm ~1 whatever
// eta is; we do not. The paper projects onto an l_inf ball whose radius it
// also calls epsilon; the public code has no projection: here it is `radius`,
// off by default. As in the public code, dropout stays as the model's mode
// has it: in training, the perturbed passes draw their own dropout masks, so
// the regularizer also penalizes dropout inconsistency.
//
// SiFT, per segment with word embeddings w (a row per token): the non-affine
// LayerNorm n = (w - mean) / s, s = sqrt(var + 1e-7) (DeBERTa's eps), is
// perturbed to n + delta, which is fed back as (n + delta) * s + mean = w +
// s * delta into the rest of the embedding path (positions, token types,
// LayerNorm). So a zero delta is exactly the clean model, and delta is in
// units of each token's own scale (the scale invariance). delta starts from
// N(0, sigma^2) truncated to [-2 sigma, 2 sigma] (DeBERTa), takes one step as
// above with epsilon = 1e-6 (DeBERTa's), no projection; s is a constant.
// DeBERTa perturbs the normalized sum of word, position and type embeddings
// (the input of the embedding LayerNorm) and detaches the embeddings in the
// final pass; here the word embeddings alone are perturbed, as the paper
// describes, and gradients reach them.
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "config/experiment_config.h"
#include "models/multitask_model.h"

namespace mtbert {

// SiFT's fixed constants (see above).
constexpr double kSiftLayerNormEps = 1e-7;
constexpr double kSiftStepEpsilon = 1e-6;

// lambda_s * divergence(f(x + delta), f(x)) where delta starts from
// N(0, sigma^2) noise and takes K normalized gradient-ascent steps of size eta
// (see above); `clean_embedded` and `clean_outputs` are embed(x) and f(x) of
// the same forward pass. Returns the weighted regularizer (differentiable
// w.r.t. the model).
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

// SiFT's perturbation of the normalized word embeddings, one per segment,
// detached; the words fed to the model are w + sift_scale(w) * delta.
std::vector<torch::Tensor> sift_perturbation(MultitaskModel& model, const std::string& task,
                                             const std::vector<TokenBatch>& segments,
                                             const torch::Tensor& clean_outputs, const SiftConfig& config);

// s = sqrt(var + kSiftLayerNormEps) of each token's word embedding, [B, N, 1],
// detached: the scale of the non-affine LayerNorm.
torch::Tensor sift_scale(const torch::Tensor& words);

// The Bregman proximal point teacher: an exponential moving average of the
// model's parameters (beta = momentum), updated after each optimizer step.
// The teacher is a twin of the model in eval mode (no dropout: a fixed
// target) whose parameters never require gradients.
class MomentumTeacher {
 public:
  MomentumTeacher(const MultitaskModel& model, double momentum);
  // theta_teacher = beta * theta_teacher + (1 - beta) * theta, per parameter;
  // buffers are copied.
  void update(const MultitaskModel& model);
  // mu * divergence(f(x; theta), f(x; theta_teacher)); the teacher's outputs
  // are computed without gradient.
  torch::Tensor bregman_term(MultitaskModel& model, const std::string& task, const std::vector<TokenBatch>& segments,
                             const torch::Tensor& student_outputs, double weight);

  const MultitaskModel& teacher() const { return teacher_; }
  // For checkpoints: the teacher's parameters and buffers are saved and restored.
  torch::nn::Module* module() { return teacher_.get(); }

 private:
  MultitaskModel teacher_;
  double momentum_;
};

}  // namespace mtbert
