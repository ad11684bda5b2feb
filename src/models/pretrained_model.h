#pragma once
// A model folder as written by scripts/convert_hf_checkpoint.py: config.json
// (HuggingFace keys), model.safetensors (BertModel's parameter names), and the
// tokenizer files (vocab.txt or spm.model, tokenizer_config.json).
#include <filesystem>

#include "models/bert_model.h"
#include "models/model_config.h"

namespace mtbert {

struct PretrainedModel {
  ModelConfig config;
  BertModel model{nullptr};
  std::filesystem::path dir;
};

// Reads config and weights; the pooler exists when the checkpoint has one.
// Every problem (missing folder or file, bad config, a weight that does not
// match the config) is a UserError naming the file.
PretrainedModel load_pretrained(const std::filesystem::path& dir);

// Writes config.json and model.safetensors into `dir` (created if needed),
// each atomically.
void save_pretrained(const BertModel& model, const std::filesystem::path& dir);

}  // namespace mtbert
