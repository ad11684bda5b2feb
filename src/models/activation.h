#pragma once
// The feed-forward activations HuggingFace configs name in `hidden_act`.
#include <string>

#include <torch/types.h>

namespace mtbert {

// "gelu" is the exact erf form (HF's default for BERT); "gelu_new" and
// "gelu_pytorch_tanh" the tanh approximation; "relu". ModelConfig::validate
// rejects other names before a model is built.
torch::Tensor apply_activation(const torch::Tensor& x, const std::string& name);

}  // namespace mtbert
