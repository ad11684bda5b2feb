#include "train/model_inputs.h"

namespace mtbert {

std::vector<EncoderInputs> model_inputs(const TaskBatch& batch, torch::Device device) {
  std::vector<EncoderInputs> inputs;
  for (const auto& segment : batch.segments) {
    TokenBatch on_device = segment.to(device);
    inputs.push_back({on_device.input_ids, on_device.attention_mask, on_device.token_type_ids});
  }
  return inputs;
}

}  // namespace mtbert
