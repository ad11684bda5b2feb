#pragma once
// A padded batch of token ids: what the data pipeline produces and what the
// encoder reads, one type for both.
#include <torch/types.h>

namespace mtbert {

// `t` on `device`. A CPU tensor bound for a GPU goes through pinned (page-
// locked) memory, so that the copy is asynchronous and overlaps with the
// computation already queued; from pageable memory it would block the host.
inline torch::Tensor to_device(const torch::Tensor& t, torch::Device device) {
  if (!device.is_cuda() || !t.device().is_cpu()) return t.to(device);
  return t.pin_memory().to(device, /*non_blocking=*/true);
}

struct TokenBatch {
  torch::Tensor input_ids;       // [B, N] int64
  torch::Tensor attention_mask;  // [B, N] int64, 0/1
  torch::Tensor token_type_ids;  // [B, N] int64, or undefined
  // Whether some position is padding (mask 0). Whoever pads knows it without
  // reading the mask, which on a GPU would wait for the device; true unless
  // the producer said otherwise (the mask is then applied, as it always was).
  bool padded = true;

  TokenBatch to(torch::Device device) const {
    return {to_device(input_ids, device), to_device(attention_mask, device),
            token_type_ids.defined() ? to_device(token_type_ids, device) : token_type_ids, padded};
  }

  // The mask the encoder's attention needs: undefined when nothing is padded,
  // so that attention runs without a bias (no add per layer on a CPU, SDPA's
  // bias-free kernels on a GPU). Pooling still reads attention_mask.
  torch::Tensor encoder_mask() const { return padded ? attention_mask : torch::Tensor(); }
};

}  // namespace mtbert
