#pragma once
// Masked-language-model pretraining (`mtbert pretrain`): the loop, its
// evaluation on held-out segments, checkpoints that resume bit for bit, and
// the model folder it leaves behind.
//
// The corpus's segments (data/mlm_corpus.h) are split once: every k-th
// segment, k = round(1 / holdout_fraction), is held out. Each epoch visits
// the others in an order drawn from the run's seed and the epoch number;
// batches are masked as they are made (data/mlm_masking.h), each from a
// generator seeded by the run's seed and the batch's place (epoch, batch), so
// a resumed run masks as an uninterrupted one. The held-out evaluation masks
// its segments from a generator of its own with a fixed seed, so every
// evaluation scores the same masked tokens.
//
// Data-parallel (a Communicator of several ranks), as training is
// (train/trainer.h): train.batch_size is per rank; every rank plans the same
// batches of batch_size x ranks segments, masks each whole and trains on its
// contiguous share of the rows, so the masks, and with the dropout off the
// weights, are those of one process with the whole batch. Each rank weighs
// its loss by its share of the batch's masked tokens, the gradients are
// averaged (GradientReducer) before clipping; the held-out evaluation's
// batches are shared out alike and its sums added up. Rank 0 builds the token
// cache (the others open it after a barrier) and alone writes the run folder.
//
// The run folder is a training run's (train/run_directory.h) plus
//   model/   config.json, model.safetensors (encoder + cls.predictions.*),
//            the tokenizer's files: a model folder for train, encode,
//            fill-mask, info and attention.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/pretrain_config.h"
#include "data/mlm_corpus.h"
#include "data/mlm_masking.h"
#include "models/masked_lm.h"
#include "optim/lr_schedule.h"
#include "text/tokenizer.h"
#include "train/mlm_step.h"
#include "train/run_directory.h"
#include "train/train_progress.h"
#include "train/trainer.h"

namespace mtbert {

struct Pretraining {
  PretrainConfig config;
  std::unique_ptr<Tokenizer> tokenizer;
  std::vector<std::filesystem::path> tokenizer_files;
  MaskedLm model{nullptr};
  torch::Device device = torch::kCPU;
  // The folder the run started in: the corpus paths of the config are
  // relative to it (a resume may run from another folder).
  std::filesystem::path working_directory;
};

// A new run: the tokenizer and encoder config into the run folder, the
// model (random, or from model.pretrained with model.config applied: the
// tensors the overrides add initialized and listed), the resolved YAML.
Pretraining start_pretraining(const PretrainConfig& config, const RunDirectory& run);
// A run folder's pretraining, rebuilt from its own files (weights come from
// the checkpoint).
Pretraining reopen_pretraining(const RunDirectory& run);
// A data-parallel rank other than 0 joining a new run: the tokenizer and
// encoder config rank 0 wrote into the run folder (the weights come from
// rank 0, see Pretrainer).
Pretraining join_pretraining(const PretrainConfig& config, const RunDirectory& run);

// The model folder `dir` of a MaskedLm and its tokenizer's files.
void write_mlm_folder(MaskedLm& model, const std::vector<std::filesystem::path>& tokenizer_files,
                      const std::filesystem::path& dir);

struct MlmEvaluation {
  double loss = 0;      // mean cross-entropy over the masked tokens
  double accuracy = 0;  // argmax == original
  int64_t tokens = 0;   // masked tokens scored
};

class Communicator;

class Pretrainer {
 public:
  // With `comm` of several ranks, this process is one data-parallel rank.
  Pretrainer(Pretraining& pretraining, RunDirectory run, Communicator* comm = nullptr);
  ~Pretrainer();

  void restore_last_checkpoint();
  TrainEnd train(const TrainerHooks& hooks);
  // summary.json (and, finished, the model folder); returns the summary.
  nlohmann::json finish(TrainEnd end, const std::string& command);

  MlmEvaluation evaluate();
  const TrainProgress& progress() const { return progress_; }
  int64_t train_segments() const { return static_cast<int64_t>(train_indices_.size()); }

 private:
  std::vector<std::vector<int64_t>> segment_ids(const std::vector<int64_t>& indices) const;
  std::vector<int64_t> epoch_order(int64_t epoch) const;
  void optimizer_step();
  void evaluate_and_checkpoint(double interval_seconds, int64_t interval_tokens);
  void save_last();
  bool writes_run() const;  // rank 0, or a single process
  int world_size() const;
  // The rows of a whole masked batch this rank trains on or scores.
  MaskedBatch my_rows(const MaskedBatch& whole) const;
  // The loss tally of every rank together (every rank must call it).
  std::pair<double, int64_t> run_tally();

  Pretraining& p_;
  RunDirectory run_;
  Communicator* comm_ = nullptr;
  TokenCache corpus_;
  VocabularyTraits vocabulary_;
  MaskingOptions masking_;
  std::vector<int64_t> train_indices_, heldout_indices_;
  std::unique_ptr<MlmStep> step_;
  std::unique_ptr<LrSchedule> schedule_;
  TrainProgress progress_;
  std::mt19937_64 host_rng_;  // saved with the checkpoints (unused by the loop itself)
  double loss_sum_ = 0;
  int64_t loss_batches_ = 0;
  double session_start_seconds_ = 0, session_clock_start_ = 0;
};

}  // namespace mtbert
