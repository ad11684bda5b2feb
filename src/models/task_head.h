#pragma once
// Per-task output heads on top of the shared encoder, and their losses.
//
//   single text:  pooled sentence -> dropout -> linear
//   pair, cross:  pooled joint input -> dropout -> linear
//   pair, siamese + "concat": [u, v, |u - v|, u * v] -> dropout -> linear
//   pair, siamese + "cosine": cos(u, v), mapped to the target's range:
//       regression (STS): 2.5 * (cos + 1), i.e. [-1, 1] onto [0, 5]
//       binary (Quora):   clamp(cos, 0, 1) read as a probability
//
// Outputs ("raw outputs" below): classes -> logits [B, C]; binary -> a logit
// [B] (concat/linear) or a probability [B] (cosine); regression -> a score [B].
#include <cstdint>
#include <string>

#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include "models/bert_model.h"

namespace mtbert {

enum class Pooling { cls, mean, pooler };
enum class HeadTarget { classes, binary, regression };
enum class PairMode { none, siamese, cross };
enum class PairCombine { concat, cosine };

struct HeadSpec {
  std::string task;
  HeadTarget target = HeadTarget::classes;
  int64_t num_classes = 0;  // classes only
  PairMode pair_mode = PairMode::none;
  PairCombine combine = PairCombine::concat;  // siamese only
  Pooling pooling = Pooling::cls;
  double dropout = 0.1;
  double regression_max = 5.0;  // cosine regression maps onto [0, regression_max]
};

// [B, N, H] hidden states -> [B, H]: the first token, the masked mean, or the
// BERT pooler's output (UserError at construction if the model has none).
torch::Tensor pool(const EncoderOutput& out, const torch::Tensor& attention_mask, Pooling pooling);

class TaskHeadImpl : public torch::nn::Module {
 public:
  TaskHeadImpl(const HeadSpec& spec, int64_t hidden_size);

  // pooled: one [B, H] tensor per segment (2 for siamese pairs).
  torch::Tensor forward(const std::vector<torch::Tensor>& pooled);

  // Cross-entropy (classes), binary cross-entropy on logits or on the cosine
  // probability (binary), MSE (regression); labels [B] float.
  torch::Tensor loss(const torch::Tensor& outputs, const torch::Tensor& labels) const;

  // Raw outputs -> what metrics and prediction files use: class index or 0/1
  // (as double), or the score.
  torch::Tensor predictions(const torch::Tensor& outputs) const;

  // Divergence between the outputs on clean and perturbed inputs, for SMART:
  // symmetric KL of the softmax (classes) or of the Bernoulli (binary), MSE
  // (regression). Gradients flow into both arguments.
  torch::Tensor divergence(const torch::Tensor& a, const torch::Tensor& b) const;

  const HeadSpec& spec() const { return spec_; }

  torch::nn::Dropout dropout{nullptr};
  torch::nn::Linear classifier{nullptr};  // null for cosine heads

 private:
  HeadSpec spec_;
};
TORCH_MODULE(TaskHead);

}  // namespace mtbert
