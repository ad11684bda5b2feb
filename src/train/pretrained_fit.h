#pragma once
// What an experiment may and may not change about the pretrained encoder it
// names (model.pretrained), checked before anything is trained or written:
// the ids its tokenizer produces must be the ones the encoder's embedding
// rows were trained on, and its shape comes from the checkpoint's own
// config.json. Both mistakes otherwise train to the end (a vocabulary of
// another tokenizer indexes rows that mean other pieces) or stop deep in
// loading on a tensor's shape.
#include <string>

#include "config/experiment_config.h"

namespace mtbert {

// UserError, naming `where` and the first difference, when model.tokenizer
// names a tokenizer (kind wordpiece or sentencepiece) whose vocabulary is
// not the pretrained folder's own: another kind, size, special-token id,
// piece or lowercasing. A SentencePiece vocabulary still to be trained
// (train_from) can never be the encoder's, so it is refused too. Nothing to
// check without model.pretrained or with kind auto (the folder's own).
void check_tokenizer_matches_pretrained(const ModelSection& model, const std::string& where);

// UserError when model.config sets a key that fixes the encoder's shape
// (sizes, layers, heads, vocabulary, positions) to another value than the
// pretrained folder's config.json. Keys that leave the checkpoint's tensors
// meaningful (dropouts, the disentangled-attention switches) stay free.
void check_config_keeps_pretrained_shape(const ModelSection& model, const std::string& where);

}  // namespace mtbert
