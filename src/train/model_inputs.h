#pragma once
// A task batch as the model takes it: one EncoderInputs per segment, on the
// model's device.
#include <vector>

#include "models/encoder_inputs.h"
#include "data/batching.h"

namespace mtbert {

std::vector<EncoderInputs> model_inputs(const TaskBatch& batch, torch::Device device);

}  // namespace mtbert
