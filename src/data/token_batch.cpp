#include "data/token_batch.h"

#include <torch/torch.h>

namespace mtbert {

TokenBatch TokenBatch::to(torch::Device device) const {
  // non_blocking: host-to-device copies overlap with compute when pinned.
  return {input_ids.to(device, /*non_blocking=*/true), token_type_ids.to(device, true),
          attention_mask.to(device, true)};
}

TokenBatch to_tensors(const PaddedBatch& batch) {
  auto make = [&](const std::vector<int64_t>& v) {
    return torch::tensor(v, torch::kLong).view({batch.batch, batch.length});
  };
  return {make(batch.ids), make(batch.token_type_ids), make(batch.attention_mask)};
}

}  // namespace mtbert
