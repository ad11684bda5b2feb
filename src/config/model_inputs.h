#pragma once
// The files a `model:` section reads when a run starts, for experiments and
// pretraining configs alike, so that a missing one is named with its key
// before a run folder exists (first_missing_input).
#include <string>
#include <utility>
#include <vector>

#include "config/experiment_config.h"

namespace mtbert {

// (key, path) pairs, in the order a run reads them: model.pretrained, then
// the tokenizer's own file (a wordpiece vocab; a sentencepiece model when
// there is nothing to train one from) and the text files it trains on when
// its model is not there yet. Empty paths are left out.
std::vector<std::pair<std::string, std::string>> model_inputs(const ModelSection& model);

// The first pair whose path does not exist, as "key: path"; none when all do.
std::optional<std::string> first_missing(const std::vector<std::pair<std::string, std::string>>& inputs);

}  // namespace mtbert
