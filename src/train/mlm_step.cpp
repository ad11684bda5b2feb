#include "train/mlm_step.h"

#include <torch/torch.h>

#include "core/autocast_scope.h"
#include "core/token_batch.h"
#include "dist/gradient_reducer.h"
#include "optim/gradient_clipping.h"
#include "optim/kept_gradients.h"
#include "optim/optimizer.h"
#include "train/step_inputs.h"

namespace mtbert {

MlmStep::MlmStep(MaskedLm model, const PretrainTrainSection& train, Precision precision, torch::Device device)
    : model_(std::move(model)), train_(train), precision_(precision), device_(device) {
  // Every parameter is the encoder's or its head's: one set of groups.
  optimizer_ = make_optimizer(*model_, optimizer_settings(train_), [](const std::string&) { return true; });
  for (auto& group : optimizer_->param_groups()) base_lrs_.push_back(group.options().get_lr());
  for (const auto& p : model_->parameters())
    if (p.requires_grad()) trainable_.push_back(p);
  gradients_ = std::make_unique<KeptGradients>(trainable_);
  inputs_ = std::make_unique<StepInputs>(device_, /*keep_buffers=*/false);
}

MlmStep::~MlmStep() = default;

void MlmStep::enable_data_parallel(Communicator& comm, int64_t bucket_bytes) {
  reducer_ = std::make_unique<GradientReducer>(comm, trainable_, bucket_bytes);
}

torch::Tensor MlmStep::accumulate(const MaskedBatch& batch, double weight) {
  torch::Tensor loss;
  if (!weight_casts_) weight_casts_ = std::make_unique<WeightCastCache>();
  {
    const AutocastScope autocast(device_, precision_ == Precision::bf16);
    // The chosen positions and their labels change in count from batch to
    // batch: kept buffers would pile up one per count, so they are plain copies.
    auto logits = model_->logits_at(inputs_->place(batch.inputs), to_device(batch.positions, device_));
    loss = torch::nn::functional::cross_entropy(logits.to(torch::kFloat), to_device(batch.labels, device_));
  }
  (loss * (weight / static_cast<double>(train_.grad_accumulation))).backward();
  return loss.detach();
}

void MlmStep::apply(double lr_factor) {
  weight_casts_.reset();
  gradients_->set_aside_unreached();
  // After averaging every rank holds the same gradients, so the norm clipped
  // to is the global one.
  if (reducer_) reducer_->average_gradients();
  if (train_.grad_clip > 0) clip_gradients(trainable_, train_.grad_clip);
  for (size_t i = 0; i < base_lrs_.size(); ++i) optimizer_->set_lr(i, base_lrs_[i] * lr_factor);
  optimizer_->step();
  gradients_->clear();
  inputs_->end_step();
}

}  // namespace mtbert
