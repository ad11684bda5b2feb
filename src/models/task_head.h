#pragma once
// Per-task output heads on top of the shared encoder, and their losses.
//
//   single text:  pooled sentence -> dropout -> linear
//   pair, cross:  pooled joint input -> dropout -> linear
//   pair, siamese: sentence vectors u, v (pooled, then the optional sentence
//     projection, one linear layer for both), and
//       "concat": [u, v, |u - v|, u * v] -> dropout -> linear
//       "uv":     [u, v] -> dropout -> linear
//       "cosine": cos(u, v) read through the cosine map (head_spec.h), with
//                 dropout on u and v (before the projection): regression
//                 (STS) e.g. 5 cos, binary (Quora) a probability
//
// Outputs ("raw outputs" below): classes -> logits [B, C]; binary -> a logit
// [B] (linear) or a probability [B] (cosine); regression -> a score [B].
#include <cstdint>
#include <string>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include "models/bert_model.h"
#include "models/dropout.h"
#include "models/head_spec.h"

namespace mtbert {

// Cosine binary heads clamp their probability to [eps, 1 - eps] before the
// log of the binary cross-entropy and of the Bernoulli divergence: -log(eps) =
// 13.8 bounds the loss of a confidently wrong pair, and 1 - 1e-6 is still
// distinct from 1 in float32 (1 - 1e-8 would round to 1 and give log(0)).
constexpr double kCosineProbabilityEps = 1e-6;

// [B, N, H] hidden states -> [B, H]: the first token, the masked mean (padding
// excluded), or the BERT pooler's output (UserError if the model has none;
// MultitaskModel already refuses such a head at construction).
torch::Tensor pool(const EncoderOutput& out, const torch::Tensor& attention_mask, Pooling pooling);

class TaskHeadImpl : public torch::nn::Module {
 public:
  TaskHeadImpl(const HeadSpec& spec, int64_t hidden_size);

  // pooled: one [B, H] tensor per segment (2 for siamese pairs).
  torch::Tensor forward(const std::vector<torch::Tensor>& pooled);

  // Mean over the batch of: cross-entropy on class indices (classes); binary
  // cross-entropy on the logit, or on the cosine probability clamped to
  // [kCosineProbabilityEps, 1 - kCosineProbabilityEps] (binary); squared error
  // (regression). labels [B] float (class indices as whole numbers).
  torch::Tensor loss(const torch::Tensor& outputs, const torch::Tensor& labels) const;

  // Raw outputs -> what metrics and prediction files use, as double [B]: the
  // argmax class index (classes), 1 where logit > 0 or probability > 0.5 else
  // 0 (binary), the score itself (regression).
  torch::Tensor predictions(const torch::Tensor& outputs) const;

  // Binary heads: the probability of label 1, [B] (the sigmoid of a logit, or
  // a cosine head's output as it is).
  torch::Tensor probability(const torch::Tensor& outputs) const;

  // Divergence between the outputs on clean and perturbed inputs, for SMART,
  // averaged over the batch, symmetric in its arguments, zero when they are
  // equal. Gradients flow into both arguments (the exact gradient, no
  // stop-gradient inside):
  //   classes:    KL(p||q) + KL(q||p) = sum_c (p_c - q_c)(log p_c - log q_c),
  //               p, q = softmax, logs from log_softmax (finite for any
  //               finite logits);
  //   binary:     the same for Bernoulli(p), Bernoulli(q), which reduces to
  //               (p - q)(logit p - logit q): exactly (sigmoid(a) -
  //               sigmoid(b))(a - b) for logits; for cosine probabilities p, q
  //               clamped to [eps, 1 - eps] first;
  //   regression: squared error.
  // Half-precision outputs are computed in float32.
  torch::Tensor divergence(const torch::Tensor& a, const torch::Tensor& b) const;

  const HeadSpec& spec() const { return spec_; }

  Dropout dropout{nullptr};
  torch::nn::Linear projection{nullptr};  // the sentence projection; null without one
  torch::nn::Linear classifier{nullptr};  // null for cosine heads

 private:
  // cos(u, v) through the spec's cosine map.
  torch::Tensor cosine_output(const torch::Tensor& u, const torch::Tensor& v) const;

  HeadSpec spec_;
};
TORCH_MODULE(TaskHead);

}  // namespace mtbert
