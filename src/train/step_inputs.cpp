#include "train/step_inputs.h"

#include <torch/torch.h>

namespace mtbert {

StepInputs::StepInputs(torch::Device device, bool keep_buffers)
    : device_(device), copy_(keep_buffers || device.is_cuda()) {}

torch::Tensor StepInputs::place(const torch::Tensor& t) {
  if (!t.defined()) return t;
  if (!copy_) return t.to(device_);
  Key key{next_++, static_cast<int>(t.scalar_type()), t.sizes().vec()};
  auto it = buffers_.find(key);
  if (it == buffers_.end())
    it = buffers_.emplace(std::move(key), torch::empty(t.sizes(), t.options().device(device_))).first;
  const bool from_host = device_.is_cuda() && t.device().is_cpu();
  it->second.copy_(from_host ? t.pin_memory() : t, /*non_blocking=*/from_host);
  return it->second;
}

TokenBatch StepInputs::place(const TokenBatch& batch) {
  return {place(batch.input_ids), place(batch.attention_mask), place(batch.token_type_ids), batch.padded};
}

std::vector<TokenBatch> StepInputs::place(const std::vector<TokenBatch>& segments) {
  std::vector<TokenBatch> out;
  out.reserve(segments.size());
  for (const auto& s : segments) out.push_back(place(s));
  return out;
}

}  // namespace mtbert
