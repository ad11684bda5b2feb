#pragma once
// The training loop: a sampler picks the task(s) of each step, each task's
// batch goes forward and backward (with SMART/SiFT and the Bregman term where
// configured), PCGrad or a plain sum combines the gradients, AdamW steps under
// the LR schedule; evaluation on dev every N steps or each epoch keeps the
// best checkpoint by the overall score; a stop request (SIGINT/SIGTERM) or
// early stopping ends the run cleanly with a checkpoint.
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optim/lr_schedule.h"
#include "train/checkpoint.h"
#include "train/eval_graphs.h"
#include "train/evaluator.h"
#include "train/experiment.h"
#include "train/run_directory.h"
#include "train/task_sampler.h"
#include "train/train_progress.h"
#include "train/train_step.h"

namespace mtbert {

enum class TrainEnd { finished, early_stopped, interrupted };
const char* train_end_name(TrainEnd end);

struct TrainerHooks {
  // Checked after every optimizer step; true: save and stop.
  std::function<bool()> stop_requested;
  bool show_progress = true;
};

class Trainer {
 public:
  // Loads the train and dev splits (and test, for the final predictions).
  // With `comm`, this process is one data-parallel rank: it trains on its
  // shard of every batch, and only rank 0 writes into the run folder.
  Trainer(Experiment& experiment, RunDirectory run, Communicator* comm = nullptr);
  ~Trainer();

  // Continues from checkpoints/last (resume): model, optimizer, progress,
  // generators, teacher; metrics.jsonl is cut back to that step.
  void restore_last_checkpoint();

  TrainEnd train(const TrainerHooks& hooks);

  // After training: the best checkpoint's predictions for dev and test, test
  // metrics where labeled, and summary.json. `command` is recorded in it.
  nlohmann::json finish(TrainEnd end, const std::string& command);

  const TrainProgress& progress() const { return progress_; }

 private:
  // The batches of the next optimizer step (grad_accumulation steps of the
  // epoch's plan, fewer at its end) forward and backward; their examples.
  int64_t accumulate_batches(const std::vector<std::vector<int64_t>>& plan);
  void optimizer_step();
  void evaluate_and_checkpoint(double interval_seconds, int64_t interval_examples);
  void save_last();
  TrainingStateRefs state_refs();
  nlohmann::json summary(const std::string& status, const std::string& command, const nlohmann::json& test) const;
  bool writes_run() const;  // rank 0, or a single process
  int world_size() const;
  LossTally run_losses() const;  // every rank's tally together
  std::vector<torch::Tensor> rank_generators();

  Experiment& e_;
  RunDirectory run_;
  Communicator* comm_ = nullptr;
  TrainProgress progress_;
  std::unique_ptr<TaskSampler> sampler_;
  std::vector<std::string> sampler_tasks_;  // the sampler's task indices -> names
  std::map<std::string, std::unique_ptr<BatchStream>> streams_;
  std::unique_ptr<TrainStep> step_;
  std::unique_ptr<EvalGraphs> eval_graphs_;  // train.cuda_graphs on a GPU
  std::unique_ptr<LrSchedule> schedule_;
  std::mt19937_64 host_rng_;
  int64_t epochs_ = 0;  // train.epochs, or what max_steps needs when that is 0
  int64_t optimizer_steps_per_epoch_ = 0;
  int64_t total_optimizer_steps_ = 0;
  double session_start_seconds_ = 0;  // progress_.train_seconds when this session began
  double session_clock_start_ = 0;    // the steady clock then
};

}  // namespace mtbert
