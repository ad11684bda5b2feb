#pragma once
// Checks of encoder inputs that come from outside (a file, a user): dtype,
// shape, and ids inside the tables. Done once at the boundary, not in
// forward(), where it would cost a device sync per step.
#include <string>

#include <torch/types.h>

#include "core/token_batch.h"
#include "models/model_config.h"

namespace mtbert {

// Throws UserError naming `where` when the inputs cannot be fed to a model of
// `config`. Integer masks of other widths and bool masks are accepted and
// converted to int64. token_type_ids of a model without token type embeddings
// (type_vocab_size 0, DeBERTa-v3) are dropped, as HuggingFace ignores them.
TokenBatch check_encoder_inputs(TokenBatch inputs, const ModelConfig& config, const std::string& where);

}  // namespace mtbert
