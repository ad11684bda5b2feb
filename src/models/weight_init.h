#pragma once
// HuggingFace BERT's initialization of fresh weights, for the encoder and for
// the modules added beside it (PALs): N(0, std) for linear and embedding
// weights, zero biases and padding rows, unit LayerNorm.
#include <torch/nn/module.h>

namespace mtbert {

void initialize_bert_style(torch::nn::Module& module, double std);

}  // namespace mtbert
