#pragma once
// One optimizer step of masked-language-model pretraining, the only place
// that knows how one is taken (the pretrainer and `mtbert bench --case
// mlm_step` both use it):
//
//   accumulate(batch), for each batch of the step: the forward pass under the
//     run's precision, logits at the masked positions only, cross-entropy,
//     backward scaled by 1 / grad_accumulation;
//   apply(lr_factor): data-parallel, the gradients averaged over the ranks;
//     global-norm clipping, each group's LR (its base times the schedule's
//     factor), AdamW, the gradients cleared (optim/kept_gradients.h).
#include <cstdint>
#include <memory>
#include <vector>

#include "config/pretrain_config.h"
#include "core/autocast_scope.h"
#include "data/mlm_masking.h"
#include "models/masked_lm.h"
#include "optim/fused_adamw.h"

namespace mtbert {

class Communicator;
class GradientReducer;
class KeptGradients;
class StepInputs;

class MlmStep {
 public:
  MlmStep(MaskedLm model, const PretrainTrainSection& train, Precision precision, torch::Device device);
  ~MlmStep();

  // Data-parallel pretraining: apply() first averages the gradients over
  // `comm`'s ranks, in flat buckets of `bucket_bytes`, so that every rank
  // clips and steps alike.
  void enable_data_parallel(Communicator& comm, int64_t bucket_bytes);

  // Forward and backward of one batch; returns its loss (a float32 scalar on
  // the model's device, detached). `weight` scales the gradient: a
  // data-parallel rank's share of the masked tokens times the number of
  // ranks, so that the average over ranks is the gradient of the whole
  // batch's mean loss.
  torch::Tensor accumulate(const MaskedBatch& batch, double weight = 1.0);
  void apply(double lr_factor);
  FusedAdamW& optimizer() { return *optimizer_; }

 private:
  MaskedLm model_;
  PretrainTrainSection train_;
  Precision precision_;
  torch::Device device_;
  std::unique_ptr<FusedAdamW> optimizer_;
  std::vector<double> base_lrs_;
  std::vector<torch::Tensor> trainable_;
  std::unique_ptr<KeptGradients> gradients_;  // of trainable_
  std::unique_ptr<StepInputs> inputs_;
  std::unique_ptr<GradientReducer> reducer_;  // data-parallel only
  // bf16: the weights' bf16 copies, kept from the step's first forward pass
  // to apply(), which changes the weights.
  std::unique_ptr<WeightCastCache> weight_casts_;
};

}  // namespace mtbert
