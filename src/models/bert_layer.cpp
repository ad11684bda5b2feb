#include "models/bert_layer.h"

#include <torch/torch.h>

#include "models/activation.h"

namespace mtbert {

BertIntermediateImpl::BertIntermediateImpl(const ModelConfig& c) : activation_(c.hidden_act) {
  dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.intermediate_size));
}

torch::Tensor BertIntermediateImpl::forward(const torch::Tensor& x) { return dense_activation(dense, x, activation_); }

BertLayerImpl::BertLayerImpl(const ModelConfig& c, int64_t index) : index_(index) {
  attention = register_module("attention", BertAttention(c));
  intermediate = register_module("intermediate", BertIntermediate(c));
  output = register_module("output", BertResidualOutput(c.intermediate_size, c));
}

AttentionOutput BertLayerImpl::forward(const torch::Tensor& hidden, const EncoderContext& ctx,
                                       const torch::Tensor& query_states) {
  AttentionOutput out = attention(hidden, ctx, query_states);
  torch::Tensor adapter;
  if (ctx.parallel_adapter) adapter = ctx.parallel_adapter(index_, query_states.defined() ? query_states : hidden);
  out.hidden = output(intermediate(out.hidden), out.hidden, adapter);
  return out;
}

}  // namespace mtbert
