#pragma once
// A module's parameters and buffers by name, and loading of them: strict (every
// expected tensor present with the right shape, nothing left over), or
// matching, which reports what is missing and left over instead of failing.
#include <string>
#include <vector>

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

struct StateMatch {
  std::vector<std::string> missing;     // the module's tensors `tensors` lacks (left as they are)
  std::vector<std::string> unexpected;  // tensors the module has no place for (not used)
};

// Copies the tensors the module and `tensors` both name; a shape mismatch is
// a UserError naming `source`. Callers decide what the rest means.
StateMatch load_matching_module_state(torch::nn::Module& module, const NamedTensors& tensors,
                                      const std::string& source);

}  // namespace mtbert
