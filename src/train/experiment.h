#pragma once
// An experiment made concrete: the tokenizer, the multi-task model on its
// device, and each task's spec, head and data. Built from an ExperimentConfig
// for a new run, or from a run folder for resuming, evaluating and predicting
// (which then needs neither the pretrained folder nor the training data).
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

#include "config/experiment_config.h"
#include "data/encoded_split.h"
#include "data/task_data.h"
#include "data/task_spec.h"
#include "models/model_config.h"
#include "models/multitask_model.h"
#include "models/task_head.h"
#include "text/tokenizer.h"
#include "train/run_directory.h"

namespace mtbert {

enum class Split { train, dev, test };
const char* split_name(Split split);

struct TaskRuntime {
  TaskConfig config;
  TaskSpec spec;
  HeadSpec head;
  // The splits read so far: raw rows (ids, gold labels) and their encodings.
  std::map<Split, TaskSplit> rows;
  std::map<Split, EncodedSplit> encoded;

  bool has(Split split) const { return encoded.count(split) > 0; }
  const std::string& name() const { return config.name; }
};

struct Experiment {
  ExperimentConfig config;
  std::unique_ptr<Tokenizer> tokenizer;
  ModelConfig model_config;
  MultitaskModel model{nullptr};
  std::vector<TaskRuntime> tasks;
  torch::Device device{torch::kCPU};
  // The folder the run was started in (summary.json's working_directory): its
  // config's relative data paths are relative to it, so that a run evaluates,
  // predicts and resumes from any folder. Empty: the current one.
  std::filesystem::path working_directory;

  // UserError listing the experiment's tasks when there is no such task.
  TaskRuntime& task(const std::string& name);
  const TaskRuntime& task(const std::string& name) const;
};

// The head a task's config and spec ask for.
HeadSpec head_spec(const TaskConfig& task, const TaskSpec& spec);

// A run's tokenizer files in `dir` as model.tokenizer says: copied from the
// pretrained folder or the configured files, or a SentencePiece model trained
// there (`task_texts` writes the tasks' texts for train_from: [tasks]).
// `where` names the config in messages.
void prepare_run_tokenizer(const ModelSection& model, const std::filesystem::path& dir, uint64_t seed,
                           const std::string& where, const std::function<std::filesystem::path()>& task_texts);

// The encoder's HuggingFace config: the pretrained folder's (or the defaults
// with the tokenizer's vocabulary size), model.config merged over it.
nlohmann::json encoder_config_json(const ModelSection& model, const Tokenizer& tokenizer);

// How a task's split is read under the config: its limit and subset, the bad
// row policy, labels required except for test.
ReadOptions split_read_options(const ExperimentConfig& config, const TaskConfig& task, Split split);

// A new run: resolves the tokenizer (copied from the pretrained folder, or
// trained and saved into the run folder), builds the encoder (pretrained
// weights, or HuggingFace's initialization under the config's seed) and the
// heads, and records the resolved config, tokenizer and model config in `run`.
Experiment start_experiment(const ExperimentConfig& config, const RunDirectory& run);

// The new run rank 0 of a data-parallel job started in `run`, as another rank
// sees it: the tokenizer and model config rank 0 wrote there, the same
// initial weights, nothing written.
Experiment join_experiment(const ExperimentConfig& config, const RunDirectory& run);

// The same experiment rebuilt from its run folder (tokenizer/ and
// model_config.json) with untrained weights: the caller loads a checkpoint.
Experiment reopen_experiment(const ExperimentConfig& config, const RunDirectory& run);

// Reads and encodes `split` of every task that has it configured (a task
// without that split is left out of it). UserError naming file and line for
// bad rows, per `train.on_bad_row`.
void load_split(Experiment& experiment, Split split);

// Replaces a task's `split` file path (mtbert eval --data task=path), which
// is relative to the current folder.
void override_split_path(Experiment& experiment, const std::string& task, Split split, const std::string& path);

// A run folder reopened by the commands that use a trained run (eval,
// predict, attention --run, train --resume): its config as resolved when it
// started, and the experiment rebuilt from the folder. With `checkpoint`
// ("best" or "last") its weights are loaded; without, they are the caller's
// business (resuming restores the whole training state). UserError when the
// folder is not a run or lacks the checkpoint.
struct OpenedRun {
  RunDirectory run;
  Experiment experiment;
};
OpenedRun open_run(const std::filesystem::path& folder, const std::string& checkpoint);

// The configured device ("auto": CUDA when available). On CUDA each rank of
// a data-parallel job takes the GPU of its local rank (cuda:LOCAL_RANK), made
// the current device; more local ranks than visible GPUs is a UserError.
torch::Device resolve_device(DeviceChoice device);

// UserError when `device` is cuda and there is no GPU to use here: this
// build's LibTorch has no CUDA (then: how to build against one), or it sees
// no GPU. Cheap, so that commands call it on their config before any
// start-up work (a tokenizer to train, data to read).
void check_device_available(DeviceChoice device);

// Parameter counts for the summary: total, trainable, shared (encoder) and
// per task.
nlohmann::json parameter_counts(const Experiment& experiment);

}  // namespace mtbert
