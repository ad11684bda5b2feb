#pragma once
// SMART (Jiang et al. 2020) smoothness-inducing adversarial regularization on
// the embedding output, its Bregman proximal point term with a momentum
// teacher, and SiFT (He et al., DeBERTa) perturbation of the layer-normalized
// word embeddings. Set per task.
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "models/multitask_model.h"
#include "train/experiment_config.h"

namespace mtbert {

// lambda_s * divergence(f(x + delta), f(x)) where delta starts from
// N(0, sigma^2) noise and takes K projected gradient-ascent steps of size eta
// under the infinity norm; `clean_outputs` are f(x) of the same forward pass.
// Returns the weighted regularizer (differentiable w.r.t. the model).
torch::Tensor smart_regularizer(MultitaskModel& model, const std::string& task,
                                const std::vector<EncoderInputs>& segments,
                                const std::vector<torch::Tensor>& clean_embedded,
                                const torch::Tensor& clean_outputs, const SmartConfig& config);

// SiFT's regularizer on the same terms (one normalized ascent step).
torch::Tensor sift_regularizer(MultitaskModel& model, const std::string& task,
                               const std::vector<EncoderInputs>& segments, const torch::Tensor& clean_outputs,
                               const SiftConfig& config);

// The Bregman proximal point teacher: an exponential moving average of the
// model's parameters (beta = momentum), updated after each optimizer step.
class MomentumTeacher {
 public:
  MomentumTeacher(const MultitaskModel& model, double momentum);
  void update(const MultitaskModel& model);
  // mu * divergence(f(x; theta), f(x; theta_teacher)).
  torch::Tensor bregman_term(MultitaskModel& model, const std::string& task, const std::vector<EncoderInputs>& segments,
                             const torch::Tensor& student_outputs, double weight);

 private:
  MultitaskModel teacher_;
  double momentum_;
};

}  // namespace mtbert
