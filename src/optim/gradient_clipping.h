#pragma once
// Global-norm gradient clipping that stays on the device: the norm and the
// scale are tensors, so a training step needs no host round trip (LibTorch's
// clip_grad_norm_ returns a double, which forces a sync on a GPU).
#include <vector>

#include <torch/types.h>

namespace mtbert {

// Scales the gradients of `parameters` so that their global L2 norm is at most
// `max_norm` (PyTorch's rule: coefficient max_norm / (norm + 1e-6), capped at
// 1). Returns the norm before clipping, as a 0-d tensor.
torch::Tensor clip_gradients(const std::vector<torch::Tensor>& parameters, double max_norm);

}  // namespace mtbert
