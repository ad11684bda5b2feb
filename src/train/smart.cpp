#include "train/smart.h"

#include <functional>

#include <torch/torch.h>

#include "core/internal_error.h"

namespace mtbert {

namespace {


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

torch::Tensor smart_ascent_update(const torch::Tensor& delta, const torch::Tensor& grad, const SmartConfig& config) {
  const double eta = config.step_size, eps = config.epsilon;
  switch (config.update) {
    case SmartUpdate::projected: {
      auto g_max = grad.abs().amax({-2, -1}, /*keepdim=*/true);  // per example
      return (delta + eta * grad / (g_max + eps)).clamp(-config.radius, config.radius);
    }
    case SmartUpdate::normalized: {
      auto step = delta + eta * grad;
      return step / (step.abs().amax({-1}, /*keepdim=*/true) + eps);  // per token
    }
  }
  throw InternalError("smart_ascent_update: unknown update");
}

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
    for (size_t s = 0; s < delta.size(); ++s) delta[s] = smart_ascent_update(delta[s].detach(), grads[s], config);
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

torch::Tensor sift_perturbed_sum(const torch::Tensor& sum, const torch::Tensor& delta) {
  auto x = sum.detach();
  return x + (x.var(-1, /*unbiased=*/false, /*keepdim=*/true) + kSiftLayerNormEps).sqrt() * delta;
}

std::vector<torch::Tensor> sift_perturbation(MultitaskModel& model, const std::string& task,
                                             const std::vector<TokenBatch>& segments,
                                             const torch::Tensor& clean_outputs, const SiftConfig& config) {
  const TaskHead head = model->head(task);
  std::vector<torch::Tensor> sums, delta, perturbed;
  {
    torch::NoGradGuard no_grad;  // the perturbed passes start from a detached input
    sums = model->embedding_sums(task, segments);
  }
  const double bound = 2.0 * config.noise_std;
  for (const auto& sum : sums) {
    delta.push_back((torch::randn_like(sum) * config.noise_std).clamp_(-bound, bound).requires_grad_(true));
    perturbed.push_back(sift_perturbed_sum(sum, delta.back()));
  }
  auto objective =
      ascent_objective(head, model->forward_from_embedding_sums(task, perturbed, segments), clean_outputs);
  auto grads = torch::autograd::grad({objective}, delta);
  torch::NoGradGuard no_grad;
  for (size_t s = 0; s < delta.size(); ++s) {
    auto g = grads[s];
    delta[s] = delta[s].detach() + config.step_size * g / (g.abs().amax({-1}, /*keepdim=*/true) + kSiftStepEpsilon);
  }
  return delta;
}

torch::Tensor sift_regularizer(MultitaskModel& model, const std::string& task,
                               const std::vector<TokenBatch>& segments, const torch::Tensor& clean_outputs,
                               const SiftConfig& config) {
  const auto delta = sift_perturbation(model, task, segments, clean_outputs, config);
  std::vector<torch::Tensor> perturbed;
  {
    torch::NoGradGuard no_grad;
    const auto sums = model->embedding_sums(task, segments);
    for (size_t s = 0; s < sums.size(); ++s) perturbed.push_back(sift_perturbed_sum(sums[s], delta[s]));
  }
  auto outputs = model->forward_from_embedding_sums(task, perturbed, segments);
  return config.weight * model->head(task)->divergence(outputs, clean_outputs);
}

double bregman_momentum(const SmartConfig& config, int64_t step, int64_t total_steps) {
  const bool early = static_cast<double>(step) < config.late_momentum_after * static_cast<double>(total_steps);
  return early ? config.momentum : config.late_momentum;
}

MomentumTeacher::MomentumTeacher(const MultitaskModel& model) : teacher_(model->twin()) {
  teacher_->eval();
  for (auto& p : teacher_->parameters()) p.requires_grad_(false);
}

void MomentumTeacher::update(const MultitaskModel& model, double beta) {
  check_invariant(beta >= 0 && beta <= 1, "MomentumTeacher: beta must be in [0, 1], got {}", beta);
  torch::NoGradGuard no_grad;
  // Paired by name, not by position: the teacher is a copy of the model, and
  // a module registered in another order must not average unrelated weights.
  auto pair_up = [](const torch::OrderedDict<std::string, torch::Tensor>& student,
                    const torch::OrderedDict<std::string, torch::Tensor>& teacher, const char* what,
                    const std::function<void(torch::Tensor&, const torch::Tensor&)>& update) {
    check_invariant(student.size() == teacher.size(), "MomentumTeacher: the model has {} {}, its teacher {}",
                    student.size(), what, teacher.size());
    for (const auto& item : teacher) {
      const torch::Tensor* source = student.find(item.key());
      check_invariant(source != nullptr, "MomentumTeacher: the model has no {} named {}", what, item.key());
      torch::Tensor target = item.value();
      update(target, *source);
    }
  };
  pair_up(model->named_parameters(), teacher_->named_parameters(), "parameters",
          [beta](torch::Tensor& t, const torch::Tensor& s) { t.mul_(beta).add_(s * (1.0 - beta)); });
  pair_up(model->named_buffers(), teacher_->named_buffers(), "buffers",
          [](torch::Tensor& t, const torch::Tensor& s) { t.copy_(s); });
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
