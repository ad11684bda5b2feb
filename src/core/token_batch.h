#pragma once
// A padded batch of token ids: what the data pipeline produces and what the
// encoder reads, one type for both.
#include <torch/types.h>

namespace mtbert {

struct TokenBatch {
  torch::Tensor input_ids;       // [B, N] int64
  torch::Tensor attention_mask;  // [B, N] int64, 0/1
  torch::Tensor token_type_ids;  // [B, N] int64, or undefined

  // non_blocking: host-to-device copies overlap with compute when pinned.
  TokenBatch to(torch::Device device) const {
    return {input_ids.to(device, /*non_blocking=*/true), attention_mask.to(device, true),
            token_type_ids.defined() ? token_type_ids.to(device, true) : token_type_ids};
  }
};

}  // namespace mtbert
