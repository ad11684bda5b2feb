#include "models/enhanced_mask_decoder.h"

#include <utility>

#include <torch/torch.h>

namespace mtbert {

EncoderOutput enhanced_mask_decoder(BertLayerImpl& last_layer, EncoderOutput penultimate,
                                    const torch::Tensor& absolute_positions, int64_t passes,
                                    const EncoderContext& ctx) {
  if (passes == 0) return penultimate;
  const torch::Tensor hidden = penultimate.last_hidden_state;
  EncoderOutput out = std::move(penultimate);
  out.last_hidden_state = hidden + absolute_positions;
  for (int64_t pass = 0; pass < passes; ++pass) {
    AttentionOutput pass_out = last_layer.forward(hidden, ctx, out.last_hidden_state);
    out.last_hidden_state = std::move(pass_out.hidden);
    if (ctx.output_attentions) out.attentions.push_back(std::move(pass_out.probs));
  }
  return out;
}

}  // namespace mtbert
