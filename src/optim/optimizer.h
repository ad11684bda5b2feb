#pragma once
// AdamW with HuggingFace's parameter groups: no weight decay on biases and
// LayerNorm weights; heads may have their own learning rate. The optimizer is
// a FusedAdamW (fused_adamw.h): LibTorch's AdamW, one pass per parameter.
#include <functional>
#include <memory>
#include <string>

#include <torch/nn/module.h>

#include "config/experiment_config.h"
#include "models/multitask_model.h"
#include "optim/fused_adamw.h"

namespace mtbert {

// Group 0: encoder weights with decay; group 1: encoder biases and LayerNorm
// without; groups 2 and 3: the same split for task-specific parameters (heads,
// adapters) at train.head_lr (or train.lr). Parameters that do not require
// gradients (a frozen encoder) are left out. Empty groups are kept so that
// group indices are stable for the LR schedule and for resuming. Every
// parameter's state is made at once (FusedAdamW::create_state).
std::unique_ptr<FusedAdamW> make_optimizer(MultitaskModel& model, const TrainSection& train);

// The same for any module: `is_shared(name)` says which parameters (by their
// name in module.named_parameters()) belong to the shared encoder. The
// parameters of torch::nn::LayerNorm modules are exempt from decay whatever
// their name, as in HuggingFace's Trainer.
std::unique_ptr<FusedAdamW> make_optimizer(const torch::nn::Module& module, const TrainSection& train,
                                           const std::function<bool(const std::string&)>& is_shared);

// MultitaskModel's rule: the encoder is registered as "bert".
bool is_encoder_parameter(const std::string& parameter_name);

// Whether a parameter name gets no weight decay (biases, LayerNorm weights):
// the last part of the name ends in "bias", or the module owning it is named
// like a LayerNorm ("LayerNorm", "layer_norm", "layernorm", any case).
bool exempt_from_weight_decay(const std::string& parameter_name);

}  // namespace mtbert
