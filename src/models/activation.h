#pragma once
// The feed-forward activations HuggingFace configs name in `hidden_act`,
// applied to a Linear layer's output.
#include <string>

#include <torch/nn/modules/linear.h>
#include <torch/types.h>

namespace mtbert {

// activation(dense(x)). "gelu" is the exact erf form (HF's default for BERT);
// "gelu_new" and "gelu_pytorch_tanh" the tanh approximation; "relu".
// ModelConfig::validate rejects other names before a model is built. For the
// GELUs on a CPU the GEMM runs without its bias and ops::bias_gelu adds the
// bias and applies GELU in one pass (forward and backward); elsewhere, where
// that unit has no kernel, the bias stays in the GEMM (cuBLASLt adds it in
// its epilogue) and GELU is LibTorch's.
torch::Tensor dense_activation(torch::nn::Linear& dense, const torch::Tensor& x, const std::string& name);

}  // namespace mtbert
