#pragma once
// One optimizer step of multi-task training, the only place that knows how
// one is taken (the trainer and `mtbert bench` both use it):
//
//   accumulate(task, batch), for each batch of the step:
//     the task's forward pass under the experiment's precision, its loss
//     (+ SMART, SiFT and the Bregman term where the task asks for them),
//     backward scaled by loss_weight / grad_accumulation, and with PCGrad the
//     task's gradient set aside;
//   apply(lr_factor, rng):
//     PCGrad's projections, global-norm clipping, each group's LR (its base
//     times the schedule's factor), AdamW, the gradients cleared (to none), and
//     the SMART teacher's moving average.
//
// The losses of the batches are tallied on the device between evaluations
// (fetching them every step would cost a host-device sync per step).
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/optim/adamw.h>

#include "config/experiment_config.h"
#include "data/batching.h"
#include "models/multitask_model.h"
#include "optim/pcgrad.h"
#include "train/smart.h"
#include "train/train_progress.h"

namespace mtbert {

// Each task's mean training loss since the last reset.
class LossTally {
 public:
  void add(const std::string& task, const torch::Tensor& loss);
  nlohmann::json mean_json() const;  // {"sst": 1.23, ...}
  // To and from TrainProgress, so that a resumed run reports the same means.
  void save(TrainProgress& progress) const;
  void restore(const TrainProgress& progress, torch::Device device);
  void reset() { *this = LossTally{}; }

 private:
  std::map<std::string, torch::Tensor> sums_;
  std::map<std::string, int64_t> batches_;
};

class TrainStep {
 public:
  // `tasks`: the experiment's tasks (their losses' weights and regularizers);
  // the model is on `device`; `total_steps`: the optimizer steps of the whole
  // run (the Bregman teacher's momentum schedule).
  TrainStep(MultitaskModel model, std::vector<TaskConfig> tasks, const TrainSection& train, Precision precision,
            torch::Device device, int64_t total_steps);
  ~TrainStep();

  // Forward and backward of one batch; its loss joins the tally.
  void accumulate(const std::string& task, const TaskBatch& batch);
  // Ends optimizer step `step` (0-based; see above); `rng` orders PCGrad's
  // projections.
  void apply(double lr_factor, int64_t step, std::mt19937_64& rng);

  torch::optim::AdamW& optimizer() { return *optimizer_; }
  // SMART's momentum teacher, or null.
  torch::nn::Module* teacher_module() { return teacher_ ? teacher_->module() : nullptr; }
  LossTally& losses() { return losses_; }

 private:
  torch::Tensor task_loss(const TaskConfig& task, const TaskBatch& batch);
  const TaskConfig& task(const std::string& name) const;

  MultitaskModel model_;
  std::vector<TaskConfig> tasks_;
  TrainSection train_;
  Precision precision_;
  torch::Device device_;
  std::unique_ptr<torch::optim::AdamW> optimizer_;
  std::vector<double> base_lrs_;  // per parameter group
  std::vector<torch::Tensor> trainable_;
  std::unique_ptr<PcgradAccumulator> pcgrad_;
  std::unique_ptr<MomentumTeacher> teacher_;
  SmartConfig teacher_config_;  // the Bregman settings of the first task that asks for it
  int64_t total_steps_;
  LossTally losses_;
};

}  // namespace mtbert
