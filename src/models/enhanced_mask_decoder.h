#pragma once
// DeBERTa's enhanced mask decoder (EMD), as microsoft/DeBERTa builds it
// (apps/models/masked_language_model.py, EnhancedMaskDecoder): the encoder
// runs up to its second-to-last layer, whose output H = H_{L-1} feeds
// `passes` runs of the last layer (its weights reused, nothing new to learn)
// in place of the last layer's own pass:
//
//   query_1   = H + absolute position embeddings     keys/values: H
//   query_n+1 = output of pass n                     keys/values: H
//
// The absolute positions are the raw table rows (before any LayerNorm), and
// the output of the last pass is the encoder's output.
#include <cstdint>

#include <torch/types.h>

#include "models/bert_encoder.h"
#include "models/bert_layer.h"
#include "models/encoder_context.h"

namespace mtbert {

// penultimate: the encoder's output up to H_{L-1} [B, N, H];
// absolute_positions broadcastable to it ([1, N, H]). Returns the last pass's
// output, each pass's attention probabilities appended (ctx.output_attentions).
EncoderOutput enhanced_mask_decoder(BertLayerImpl& last_layer, EncoderOutput penultimate,
                                    const torch::Tensor& absolute_positions, int64_t passes,
                                    const EncoderContext& ctx);

}  // namespace mtbert
