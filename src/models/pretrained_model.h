#pragma once
// A model folder as written by scripts/convert_hf_checkpoint.py: config.json
// (HuggingFace keys), model.safetensors (BertModel's parameter names), and the
// tokenizer files (vocab.txt or spm.model, tokenizer_config.json).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/safetensors.h"
#include "models/bert_model.h"
#include "models/masked_lm.h"
#include "models/model_config.h"

namespace mtbert {

struct PretrainedModel {
  ModelConfig config;
  BertModel model{nullptr};
  std::filesystem::path dir;
  // Only with config overrides: the model's tensors the checkpoint lacks,
  // initialized afresh (HuggingFace's scheme, from the global torch seed), and
  // the checkpoint's tensors the overridden model has no place for.
  std::vector<std::string> initialized;
  std::vector<std::string> unused;
  // The masked-language-model head's tensors (cls.predictions.*, see
  // masked_lm.h), when the folder has one; not part of `model`.
  NamedTensors mlm_head;
};

// Reads config and weights; the pooler exists when the checkpoint has one.
// Strict: every tensor the config implies is in the checkpoint and nothing
// else is, but for an MLM head (set aside in mlm_head). Every problem (missing folder or file, bad config, a weight that
// does not match the config) is a UserError naming the file.
PretrainedModel load_pretrained(const std::filesystem::path& dir);

// UserError, saying how to get one, unless `dir` is a folder.
void check_model_folder(const std::filesystem::path& dir);

// The same with some config.json keys replaced (a JSON object of
// ModelConfig's keys), e.g. {"relative_attention": true, "pos_att_type":
// "c2p|p2c", "position_biased_input": false} to run bert-base-uncased with
// disentangled attention. The checkpoint is first checked strictly against
// its own config.json; the tensors the overrides add are then initialized
// and the ones they remove dropped, both listed in the result and logged
// (never a silent partial load). A tensor whose shape the overrides change is
// a UserError, as is an unknown key.
PretrainedModel load_pretrained(const std::filesystem::path& dir, const nlohmann::json& config_overrides);

// The folder's encoder with its MLM head; UserError when it has none.
MaskedLm masked_lm_of(const PretrainedModel& pretrained);

// Writes config.json and model.safetensors (the encoder's tensors and
// `extra`, e.g. an MLM head's) into `dir` (created if needed), each
// atomically.
void save_pretrained(const BertModel& model, const std::filesystem::path& dir, const NamedTensors& extra = {});

}  // namespace mtbert
