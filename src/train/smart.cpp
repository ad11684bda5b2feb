#include "train/smart.h"

#include <torch/torch.h>

namespace mtbert {

namespace {

// delta + eta * g / (max_h |g| + epsilon), per token.
torch::Tensor ascent_step(const torch::Tensor& delta, const torch::Tensor& grad, double eta, double epsilon) {
  return delta + eta * grad / (grad.abs().amax({-1}, /*keepdim=*/true) + epsilon);
}

std::vector<torch::Tensor> detached(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) out.push_back(t.detach());
  return out;
}

// The divergence of perturbed outputs from the (detached) clean ones, summed
// over the batch: the objective each ascent step climbs.
torch::Tensor ascent_objective(const TaskHead& head, const torch::Tensor& perturbed_outputs,
                               const torch::Tensor& clean_outputs) {
  return head->divergence(perturbed_outputs, clean_outputs.detach()) * static_cast<double>(clean_outputs.size(0));
}

}  // namespace

std::vector<torch::Tensor> smart_perturbation(MultitaskModel& model, const std::string& task,
                                              const std::vector<TokenBatch>& segments,
                                              const std::vector<torch::Tensor>& clean_embedded,
                                              const torch::Tensor& clean_outputs, const SmartConfig& config) {
  const TaskHead head = model->head(task);
  const auto base = detached(clean_embedded);
  std::vector<torch::Tensor> delta;
  delta.reserve(base.size());
  for (const auto& e : base) delta.push_back(torch::randn_like(e) * config.noise_std);
  for (int64_t step = 0; step < config.steps; ++step) {
    std::vector<torch::Tensor> perturbed;
    for (size_t s = 0; s < base.size(); ++s) {
      delta[s].requires_grad_(true);
      perturbed.push_back(base[s] + delta[s]);
    }
    auto objective = ascent_objective(head, model->forward_embedded(task, perturbed, segments), clean_outputs);
    auto grads = torch::autograd::grad({objective}, delta);
    torch::NoGradGuard no_grad;
    for (size_t s = 0; s < delta.size(); ++s) {
      auto next = ascent_step(delta[s].detach(), grads[s], config.step_size, config.epsilon);
      if (config.radius > 0) next.clamp_(-config.radius, config.radius);
      delta[s] = next;
    }
  }
  return detached(delta);
}

torch::Tensor smart_regularizer(MultitaskModel& model, const std::string& task,
                                const std::vector<TokenBatch>& segments,
                                const std::vector<torch::Tensor>& clean_embedded,
                                const torch::Tensor& clean_outputs, const SmartConfig& config) {
  const auto delta = smart_perturbation(model, task, segments, clean_embedded, clean_outputs, config);
  std::vector<torch::Tensor> perturbed;
  for (size_t s = 0; s < delta.size(); ++s) perturbed.push_back(clean_embedded[s] + delta[s]);
  auto outputs = model->forward_embedded(task, perturbed, segments);
  return config.weight * model->head(task)->divergence(outputs, clean_outputs);
}

torch::Tensor sift_scale(const torch::Tensor& words) {
  auto w = words.detach();
  return (w.var(-1, /*unbiased=*/false, /*keepdim=*/true) + kSiftLayerNormEps).sqrt();
}

std::vector<torch::Tensor> sift_perturbation(MultitaskModel& model, const std::string& task,
                                             const std::vector<TokenBatch>& segments,
                                             const torch::Tensor& clean_outputs, const SiftConfig& config) {
  const TaskHead head = model->head(task);
  std::vector<torch::Tensor> words, scale, delta, perturbed;
  {
    torch::NoGradGuard no_grad;  // the lookup only feeds the ascent, which needs no table gradient
    words = model->word_embed(task, segments);
  }
  for (const auto& w : words) {
    scale.push_back(sift_scale(w));
    const double bound = 2.0 * config.noise_std;
    delta.push_back((torch::randn_like(w) * config.noise_std).clamp_(-bound, bound).requires_grad_(true));
    perturbed.push_back(w + scale.back() * delta.back());
  }
  auto objective = ascent_objective(head, model->forward_from_word_embeddings(task, perturbed, segments),
                                    clean_outputs);
  auto grads = torch::autograd::grad({objective}, delta);
  torch::NoGradGuard no_grad;
  for (size_t s = 0; s < delta.size(); ++s)
    delta[s] = ascent_step(delta[s].detach(), grads[s], config.step_size, kSiftStepEpsilon);
  return delta;
}

torch::Tensor sift_regularizer(MultitaskModel& model, const std::string& task,
                               const std::vector<TokenBatch>& segments, const torch::Tensor& clean_outputs,
                               const SiftConfig& config) {
  const auto delta = sift_perturbation(model, task, segments, clean_outputs, config);
  auto words = model->word_embed(task, segments);
  std::vector<torch::Tensor> perturbed;
  for (size_t s = 0; s < words.size(); ++s) perturbed.push_back(words[s] + sift_scale(words[s]) * delta[s]);
  auto outputs = model->forward_from_word_embeddings(task, perturbed, segments);
  return config.weight * model->head(task)->divergence(outputs, clean_outputs);
}

MomentumTeacher::MomentumTeacher(const MultitaskModel& model, double momentum)
    : teacher_(model->twin()), momentum_(momentum) {
  TORCH_CHECK(momentum >= 0 && momentum <= 1, "MomentumTeacher: momentum must be in [0, 1], got ", momentum);
  teacher_->eval();
  for (auto& p : teacher_->parameters()) p.requires_grad_(false);
}

void MomentumTeacher::update(const MultitaskModel& model) {
  torch::NoGradGuard no_grad;
  auto student = model->parameters();
  auto teacher = teacher_->parameters();
  TORCH_CHECK(student.size() == teacher.size(), "MomentumTeacher: the model's architecture changed");
  for (size_t i = 0; i < teacher.size(); ++i) teacher[i].mul_(momentum_).add_(student[i] * (1.0 - momentum_));
  auto student_buffers = model->buffers();
  auto teacher_buffers = teacher_->buffers();
  for (size_t i = 0; i < teacher_buffers.size(); ++i) teacher_buffers[i].copy_(student_buffers[i]);
}

torch::Tensor MomentumTeacher::bregman_term(MultitaskModel& model, const std::string& task,
                                            const std::vector<TokenBatch>& segments,
                                            const torch::Tensor& student_outputs, double weight) {
  torch::Tensor teacher_outputs;
  {
    torch::NoGradGuard no_grad;
    teacher_outputs = teacher_->forward(task, segments);
  }
  return weight * model->head(task)->divergence(student_outputs, teacher_outputs);
}

}  // namespace mtbert
