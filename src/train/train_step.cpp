#include "train/train_step.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "core/autocast_scope.h"
#include "core/user_error.h"
#include "optim/gradient_clipping.h"
#include "optim/optimizer.h"

namespace mtbert {

void LossTally::add(const std::string& task, const torch::Tensor& loss) {
  auto& sum = sums_[task];
  sum = sum.defined() ? sum + loss.detach().to(torch::kDouble) : loss.detach().to(torch::kDouble);
  ++batches_[task];
}

nlohmann::json LossTally::mean_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [task, sum] : sums_) out[task] = sum.item<double>() / static_cast<double>(batches_.at(task));
  return out;
}

void LossTally::save(TrainProgress& progress) const {
  progress.interval_losses.clear();
  for (const auto& [task, sum] : sums_) progress.interval_losses[task] = {sum.item<double>(), batches_.at(task)};
}

void LossTally::restore(const TrainProgress& progress, torch::Device device) {
  reset();
  for (const auto& [task, l] : progress.interval_losses) {
    sums_[task] = torch::tensor(l.first, torch::TensorOptions().dtype(torch::kDouble).device(device));
    batches_[task] = l.second;
  }
}

TrainStep::TrainStep(MultitaskModel model, std::vector<TaskConfig> tasks, const TrainSection& train,
                     Precision precision, torch::Device device, int64_t total_steps)
    : model_(std::move(model)),
      tasks_(std::move(tasks)),
      train_(train),
      precision_(precision),
      device_(device),
      total_steps_(total_steps) {
  optimizer_ = make_optimizer(model_, train_);
  for (auto& group : optimizer_->param_groups()) base_lrs_.push_back(group.options().get_lr());
  for (const auto& p : model_->parameters())
    if (p.requires_grad()) trainable_.push_back(p);
  if (train_.pcgrad.enabled) {
    std::vector<torch::Tensor> shared;
    for (const auto& p : model_->shared_parameters())
      if (p.requires_grad()) shared.push_back(p);
    pcgrad_ = std::make_unique<PcgradAccumulator>(shared);
  }
  for (const auto& task : tasks_) {
    if (task.smart.enabled && task.smart.bregman) {
      teacher_ = std::make_unique<MomentumTeacher>(model_);
      teacher_config_ = task.smart;
      break;
    }
  }
}

TrainStep::~TrainStep() = default;

const TaskConfig& TrainStep::task(const std::string& name) const {
  for (const auto& t : tasks_)
    if (t.name == name) return t;
  throw UserError(fmt::format("no task \"{}\" to train", name));
}

torch::Tensor TrainStep::task_loss(const TaskConfig& config, const TaskBatch& batch) {
  const AutocastScope autocast(device_, precision_ == Precision::bf16);
  const std::string& task = config.name;
  const auto inputs = batch.segments_on(device_);
  const auto labels = batch.labels.to(device_, /*non_blocking=*/true);
  TaskHead head = model_->head(task);
  const bool smart = config.smart.enabled, bregman = teacher_ && smart && config.smart.bregman;
  if (!smart && !config.sift.enabled) return head->loss(model_(task, inputs), labels);

  const auto embedded = model_->embed(task, inputs);
  const auto outputs = model_->forward_embedded(task, embedded, inputs);
  auto loss = head->loss(outputs, labels);
  if (smart) loss = loss + smart_regularizer(model_, task, inputs, embedded, outputs, config.smart);
  if (config.sift.enabled) loss = loss + sift_regularizer(model_, task, inputs, outputs, config.sift);
  if (bregman) loss = loss + teacher_->bregman_term(model_, task, inputs, outputs, config.smart.bregman_weight);
  return loss;
}

void TrainStep::accumulate(const std::string& name, const TaskBatch& batch) {
  const TaskConfig& config = task(name);
  auto loss = task_loss(config, batch);
  (loss * (config.loss_weight / static_cast<double>(train_.grad_accumulation))).backward();
  if (pcgrad_) pcgrad_->capture_task_gradient();
  losses_.add(name, loss);
}

void TrainStep::apply(double lr_factor, int64_t step, std::mt19937_64& rng) {
  if (pcgrad_) pcgrad_->apply(train_.pcgrad.reduction, rng);
  if (train_.grad_clip > 0) clip_gradients(trainable_, train_.grad_clip);
  auto& groups = optimizer_->param_groups();
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(base_lrs_[i] * lr_factor);
  optimizer_->step();
  clear_gradients(*optimizer_);
  if (teacher_) teacher_->update(model_, bregman_momentum(teacher_config_, step, total_steps_));
}

}  // namespace mtbert
