#include "models/enhanced_mask_decoder.h"

#include <torch/torch.h>

namespace mtbert {

torch::Tensor enhanced_mask_decoder(BertLayerImpl& last_layer, const torch::Tensor& hidden,
                                    const torch::Tensor& absolute_positions, int64_t passes,
                                    const EncoderContext& ctx) {
  if (passes == 0) return hidden;
  torch::Tensor query = hidden + absolute_positions;
  for (int64_t pass = 0; pass < passes; ++pass) query = last_layer.forward(hidden, ctx, query);
  return query;
}

}  // namespace mtbert
