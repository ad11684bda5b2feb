#include "models/bert_pooler.h"

#include <torch/torch.h>

namespace mtbert {

BertPoolerImpl::BertPoolerImpl(const ModelConfig& c) {
  dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size));
}

torch::Tensor BertPoolerImpl::forward(const torch::Tensor& hidden) {
  using torch::indexing::Slice;
  return torch::tanh(dense(hidden.index({Slice(), 0})));
}

}  // namespace mtbert
