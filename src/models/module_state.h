#pragma once
// A module's parameters and buffers by name, and strict loading of them: every
// expected tensor present with the right shape, nothing left over.
#include <string>

#include <torch/nn/module.h>

#include "core/safetensors.h"

namespace mtbert {

// Parameters and persistent buffers under their dotted names.
NamedTensors module_state(const torch::nn::Module& module);

// Copies `tensors` into the module (converting dtype), under no_grad. Throws
// UserError, naming `source`, for a missing tensor, a tensor whose shape
// differs from the module's (both shapes given), or tensors the module does
// not have.
void load_module_state(torch::nn::Module& module, const NamedTensors& tensors, const std::string& source);

}  // namespace mtbert
