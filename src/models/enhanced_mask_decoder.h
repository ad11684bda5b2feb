#pragma once
// DeBERTa's enhanced mask decoder (EMD) as the report uses it for downstream
// tasks: `passes` extra runs of the encoder's last layer (its weights reused,
// nothing new to learn) on top of the encoder output H:
//
//   query_1   = H + absolute position embeddings     keys/values: H
//   query_n+1 = output of pass n                     keys/values: H
//
// microsoft/DeBERTa's pretraining decoder starts from the output of the
// second-to-last layer instead; downstream, the report stacks EMD on the full
// encoder, and so does mtbert.
#include <cstdint>

#include <torch/types.h>

#include "models/bert_layer.h"
#include "models/encoder_context.h"

namespace mtbert {

// hidden [B, N, H]; absolute_positions broadcastable to it ([1, N, H]).
torch::Tensor enhanced_mask_decoder(BertLayerImpl& last_layer, const torch::Tensor& hidden,
                                    const torch::Tensor& absolute_positions, int64_t passes,
                                    const EncoderContext& ctx);

}  // namespace mtbert
