#pragma once
// Training checkpoints: the model's weights, and for resuming also the
// optimizer, the training progress, every random generator and the SMART
// teacher, so that a resumed run continues bit for bit (on CPU) where the
// interrupted one stopped.
//
// A checkpoint folder holds model.safetensors (the model's parameter names:
// MultitaskModel's, or MaskedLm's when pretraining), state.json (TrainProgress), and for "last" optimizer.pt (LibTorch's
// serialization of AdamW), rng.safetensors (LibTorch's generator states) and
// teacher.safetensors when there is a teacher.
#include <filesystem>
#include <random>
#include <string>

#include <torch/optim/optimizer.h>

#include "models/multitask_model.h"
#include "train/run_directory.h"
#include "train/train_progress.h"

namespace mtbert {

struct TrainingStateRefs {
  std::shared_ptr<torch::nn::Module> model;
  torch::optim::Optimizer* optimizer = nullptr;  // null: weights and progress only
  TrainProgress* progress = nullptr;
  std::mt19937_64* host_rng = nullptr;            // the trainer's own generator (PCGrad order)
  torch::nn::Module* teacher = nullptr;           // SMART's momentum teacher, if any
  // Data-parallel runs: the rank loading (rank r > 0 restores its own CPU
  // generator, saved as "cpu.rank<r>"), and for saving every rank's CPU
  // generator state in rank order (dropout differs between ranks).
  int rank = 0;
  const std::vector<torch::Tensor>* rank_generators = nullptr;
};

// Writes checkpoint `name` of `run` atomically (see RunDirectory).
void save_checkpoint(const RunDirectory& run, const std::string& name, const TrainingStateRefs& state);

// Restores what `state` points to from checkpoint `name`. UserError naming the
// file for anything missing or inconsistent with the model.
void load_checkpoint(const RunDirectory& run, const std::string& name, const TrainingStateRefs& state);

// Just the weights, into `model` (eval / predict).
void load_checkpoint_weights(const RunDirectory& run, const std::string& name, MultitaskModel& model);

}  // namespace mtbert
