#pragma once
// A padded batch of token ids as tensors, ready for the encoder.
#include <torch/types.h>

#include "text/sequence_encoder.h"

namespace mtbert {

struct TokenBatch {
  torch::Tensor input_ids;       // [B, N] int64
  torch::Tensor token_type_ids;  // [B, N] int64
  torch::Tensor attention_mask;  // [B, N] int64

  TokenBatch to(torch::Device device) const;
};

TokenBatch to_tensors(const PaddedBatch& batch);

}  // namespace mtbert
