#pragma once
// AdamW with HuggingFace's parameter groups: no weight decay on biases and
// LayerNorm weights; heads may have their own learning rate.
#include <memory>

#include <torch/optim/adamw.h>

#include "models/multitask_model.h"
#include "train/experiment_config.h"

namespace mtbert {

// Group 0: encoder weights with decay; group 1: encoder biases and LayerNorm
// without; groups 2 and 3: the same split for task-specific parameters (heads,
// adapters) at train.head_lr (or train.lr). Parameters that do not require
// gradients (a frozen encoder) are left out. Empty groups are kept so that
// group indices are stable for the LR schedule and for resuming.
std::unique_ptr<torch::optim::AdamW> make_optimizer(MultitaskModel& model, const TrainSection& train);

// Whether a parameter name gets no weight decay (biases, LayerNorm weights).
bool exempt_from_weight_decay(const std::string& parameter_name);

}  // namespace mtbert
