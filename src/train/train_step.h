#pragma once
// One optimizer step of multi-task training, the only place that knows how
// one is taken (the trainer and `mtbert bench` both use it):
//
//   accumulate(batches), the batches of one (micro-)step, one per task:
//     the tasks that may share a pass (train.join_tasks, no PCGrad, no SMART
//     or SiFT: those need a task's own gradient or its own perturbed pass) run
//     one encoder pass over the rows of those whose lengths are close enough
//     (data/join_batches.h: on a CPU, at most 10% more tokens padded; on a GPU,
//     all of them), each head on its rows, and one backward of the sum of
//     their losses, each scaled by
//     loss_weight / grad_accumulation; the others run alone: the task's forward
//     pass under the experiment's precision, its loss (+ SMART, SiFT and the
//     Bregman term where the task asks for them), its backward, and with
//     PCGrad the task's gradient set aside;
//   apply(lr_factor, rng):
//     PCGrad's projections, global-norm clipping, each group's LR (its base
//     times the schedule's factor), AdamW, the gradients cleared
//     (optim/kept_gradients.h), and the SMART teacher's moving average.
//
// Nothing in either waits on the device (no .item(), no host-made tensor
// but the batches' own inputs, which land in buffers kept per input and
// shape: train/step_inputs.h): the losses of the batches are tallied on the
// device between evaluations, clipping and AdamW's scalars stay there too.
//
// So on a GPU both can be captured in CUDA graphs (train.cuda_graphs:
// train/step_graphs.h): each accumulate() is planned on the host (its
// passes, their inputs copied to the device, every length padded up to a
// multiple of train.cuda_graph_length_multiple), then its passes' device
// work runs as one graph per plan (the tasks, shapes and loss weights of its
// passes), and apply()'s clipping, AdamW and the zeroing of the gradients as
// one graph per set of parameters with gradients; the LRs are written before
// it, the host's bookkeeping (batch counts, which parameters the backward
// reached) done after it, since a replay runs no host code.
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/experiment_config.h"
#include "core/autocast_scope.h"
#include "core/joined_batch.h"
#include "data/batching.h"
#include "models/multitask_model.h"
#include "optim/fused_adamw.h"
#include "optim/pcgrad.h"
#include "train/smart.h"
#include "train/train_progress.h"

namespace mtbert {

class Communicator;
class GradientReducer;
class KeptGradients;
class StepGraphs;
class StepInputs;

// Each task's mean training loss since the last reset: the sums as one dense
// tensor in the experiment's task order, on the model's device (a step adds
// its loss without waiting for it), and the batch counts on the host. Every
// rank holds every task in the same order, whatever tasks it has drawn, so
// the data-parallel sum is one all-reduce of one tensor, and reading the
// tally is one transfer.
class LossTally {
 public:
  LossTally(std::vector<std::string> tasks, torch::Device device);
  // A batch's loss in two halves: the loss into the sums (device work, which
  // a captured step replays) and the batch into the counts (host bookkeeping).
  void add_loss(const std::string& task, const torch::Tensor& loss);
  void count_batch(const std::string& task);
  // The tallies of all ranks together (every rank must call it).
  LossTally summed(Communicator& comm) const;
  nlohmann::json mean_json() const;  // {"sst": 1.23, ...}: tasks with batches
  // To and from TrainProgress, so that a resumed run reports the same means.
  void save(TrainProgress& progress) const;
  void restore(const TrainProgress& progress);
  void reset();

 private:
  size_t index(const std::string& task) const;

  std::vector<std::string> tasks_;
  torch::Tensor sums_;  // [tasks], double
  std::vector<int64_t> batches_;
};

class TrainStep {
 public:
  // `tasks`: the experiment's tasks (their losses' weights and regularizers);
  // the model is on `device`; `total_steps`: the optimizer steps of the whole
  // run (the Bregman teacher's momentum schedule).
  TrainStep(MultitaskModel model, std::vector<TaskConfig> tasks, const TrainSection& train, Precision precision,
            torch::Device device, int64_t total_steps);
  ~TrainStep();

  // Data-parallel training: gradients are averaged over `comm`'s ranks in
  // flat buckets of `bucket_bytes` before PCGrad and clipping (with PCGrad,
  // each task's gradient of the shared parameters is averaged before the
  // surgery), so every rank takes the same step.
  void enable_data_parallel(Communicator& comm, int64_t bucket_bytes);

  // Forward and backward of one batch; its loss joins the tally. A
  // data-parallel shard weighs its gradient by its share of the global batch
  // (size / global_size), so that the average over ranks is the gradient of
  // the whole batch's mean loss; an empty shard contributes zeros.
  void accumulate(const std::vector<TaskBatch>& batches);
  void accumulate(const std::string& task, const TaskBatch& batch);
  // Ends optimizer step `step` (0-based; see above); `rng` orders PCGrad's
  // projections.
  void apply(double lr_factor, int64_t step, std::mt19937_64& rng);

  // How the step runs its tasks' passes, for the log: which tasks share one
  // encoder pass and why the others run alone.
  std::string pass_plan() const;

  FusedAdamW& optimizer() { return *optimizer_; }
  // SMART's momentum teacher, or null.
  torch::nn::Module* teacher_module() { return teacher_ ? teacher_->module() : nullptr; }
  LossTally& losses() { return losses_; }
  // Data-parallel: the all-reduce calls and bytes of the last step (bench).
  int64_t last_all_reduce_calls() const;
  int64_t last_all_reduce_bytes() const;
  // With train.cuda_graphs on a GPU: the graphs captured so far; else 0.
  size_t captured_graphs() const;

 private:
  // One encoder pass of a step, its inputs on the device: one batch on its
  // own (segments), or several in one joint pass (joined).
  struct Pass {
    std::vector<const TaskBatch*> batches;
    std::vector<TokenBatch> segments;
    JoinedBatch joined;
    std::vector<torch::Tensor> labels;  // per batch
  };
  // The passes of `batches`, their inputs placed (host work).
  std::vector<Pass> plan_passes(const std::vector<TaskBatch>& batches);
  Pass place_alone(const TaskBatch& batch);
  Pass place_joined(std::vector<const TaskBatch*> batches);
  // `tokens` padded as the step's graphs want (unchanged without graphs).
  TokenBatch bucketed(const TokenBatch& tokens, int64_t pad_id) const;
  // A pass's forward, loss and backward (device work).
  void run_pass(const Pass& pass);
  // The passes' work in a graph keyed by their plan.
  void run_graphed(const std::vector<Pass>& passes);
  torch::Tensor task_loss(const TaskConfig& task, const std::vector<TokenBatch>& inputs, const torch::Tensor& labels);
  // Why `task` runs its own pass ("" when it may share one).
  std::string alone_reason(const TaskConfig& task) const;
  // How much padding a joint pass may add (group_by_length), by device.
  double join_padding() const;
  // The factor of a batch's loss: its task's loss_weight, its data-parallel
  // shard's share of the global batch, 1 / grad_accumulation.
  double loss_scale(const TaskConfig& task, const TaskBatch& batch) const;
  const TaskConfig& task(const std::string& name) const;

  MultitaskModel model_;
  std::vector<TaskConfig> tasks_;
  TrainSection train_;
  Precision precision_;
  torch::Device device_;
  std::unique_ptr<FusedAdamW> optimizer_;
  std::vector<double> base_lrs_;  // per parameter group
  std::vector<torch::Tensor> trainable_;
  std::unique_ptr<KeptGradients> gradients_;  // of trainable_
  std::unique_ptr<StepInputs> inputs_;
  // train.cuda_graphs on a GPU, else null; per pass graph, the parameters
  // its backward reaches (KeptGradients' record, which a replay cannot set).
  std::unique_ptr<StepGraphs> graphs_;
  std::map<std::string, std::vector<char>> reached_by_graph_;
  std::unique_ptr<PcgradAccumulator> pcgrad_;
  std::unique_ptr<GradientReducer> reducer_;       // data-parallel only
  int world_size_ = 1;
  std::unique_ptr<MomentumTeacher> teacher_;
  SmartConfig teacher_config_;  // the Bregman settings of the first task that asks for it
  int64_t total_steps_;
  LossTally losses_;
  // bf16: the weights' bf16 copies, kept from the step's first forward pass
  // to apply(), which changes the weights.
  std::unique_ptr<WeightCastCache> weight_casts_;
};

}  // namespace mtbert
