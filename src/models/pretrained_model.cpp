#include "models/pretrained_model.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/atomic_file.h"
#include "core/json_file.h"
#include "core/safetensors.h"
#include "core/user_error.h"
#include "models/masked_lm.h"
#include "models/module_state.h"

namespace mtbert {

namespace fs = std::filesystem;

void check_model_folder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UserError(fmt::format("model folder {} does not exist: convert bert-base-uncased into it "
                                "(docs/models.md, \"Converting bert-base-uncased\"), or pretrain an encoder offline "
                                "(docs/pretraining.md) and name its model/ folder",
                                dir.string()));
}

namespace {

struct FolderFiles {
  fs::path config;
  fs::path weights;
};

FolderFiles check_folder(const fs::path& dir) {
  check_model_folder(dir);
  FolderFiles files{dir / "config.json", dir / "model.safetensors"};
  if (!fs::exists(files.config))
    throw UserError(fmt::format("{} has no config.json (convert HuggingFace folders with "
                                "scripts/convert_hf_checkpoint.py)",
                                dir.string()));
  if (!fs::exists(files.weights))
    throw UserError(fmt::format("{} has no model.safetensors (convert HuggingFace folders with "
                                "scripts/convert_hf_checkpoint.py)",
                                dir.string()));
  return files;
}

nlohmann::json with_overrides(nlohmann::json config, const nlohmann::json& overrides, const fs::path& config_path) {
  if (!overrides.is_object())
    throw UserError(fmt::format("config overrides of {} must be a mapping of config keys, got {}",
                                config_path.string(), json_text(overrides)));
  const auto& known = model_config_keys();
  for (const auto& [key, value] : overrides.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw UserError(fmt::format("config override \"{}\" is not a model config key (known: {})", key,
                                  fmt::join(known, ", ")));
    config[key] = value;
  }
  return config;
}

// Moves the MLM head's tensors out of `tensors`.
NamedTensors take_mlm_head(NamedTensors& tensors) {
  NamedTensors head;
  for (auto it = tensors.begin(); it != tensors.end();) {
    if (it->first.rfind(kMlmHeadPrefix, 0) == 0) {
      head.insert(*it);
      it = tensors.erase(it);
    } else {
      ++it;
    }
  }
  return head;
}

}  // namespace

PretrainedModel load_pretrained(const fs::path& dir) {
  const FolderFiles files = check_folder(dir);
  PretrainedModel result;
  result.dir = dir;
  result.config = read_model_config(files.config);
  SafetensorsFile weights = read_safetensors(files.weights);
  result.mlm_head = take_mlm_head(weights.tensors);
  const bool with_pooler = weights.tensors.count("pooler.dense.weight") > 0;
  result.model = BertModel(result.config, BertModelOptions{with_pooler});
  load_module_state(*result.model, weights.tensors, files.weights.string());
  result.model->eval();
  return result;
}

PretrainedModel load_pretrained(const fs::path& dir, const nlohmann::json& config_overrides) {
  const FolderFiles files = check_folder(dir);
  const nlohmann::json own = read_json_file(files.config);
  const ModelConfig own_config = model_config_from_json(own, files.config.string());
  SafetensorsFile weights = read_safetensors(files.weights);
  NamedTensors mlm_head = take_mlm_head(weights.tensors);
  const bool with_pooler = weights.tensors.count("pooler.dense.weight") > 0;
  {
    // The checkpoint must be whole by its own config before anything is
    // initialized in its place.
    BertModel own_model(own_config, BertModelOptions{with_pooler});
    load_module_state(*own_model, weights.tensors, files.weights.string());
  }

  const std::string where = fmt::format("{} with overrides {}", files.config.string(), json_text(config_overrides));
  PretrainedModel result;
  result.dir = dir;
  result.config = model_config_from_json(with_overrides(own, config_overrides, files.config), where);
  result.model = BertModel(result.config, BertModelOptions{with_pooler});
  result.model->initialize_weights();
  StateMatch match = load_matching_module_state(*result.model, weights.tensors,
                                                fmt::format("{} (config overrides {})", files.weights.string(),
                                                            json_text(config_overrides)));
  result.initialized = std::move(match.missing);
  result.mlm_head = std::move(mlm_head);
  result.unused = std::move(match.unexpected);
  if (!result.initialized.empty())
    spdlog::warn("{}: initialized {} tensor(s) the checkpoint lacks (normal, std {}): {}", dir.string(),
                 result.initialized.size(), result.config.initializer_range, fmt::join(result.initialized, ", "));
  if (!result.unused.empty())
    spdlog::warn("{}: dropped {} checkpoint tensor(s) the overridden config has no place for: {}", dir.string(),
                 result.unused.size(), fmt::join(result.unused, ", "));
  result.model->eval();
  return result;
}

MaskedLm masked_lm_of(const PretrainedModel& pretrained) {
  if (pretrained.mlm_head.empty())
    throw UserError(fmt::format("{} has no masked-language-model head (cls.predictions.*): pretrain one with "
                                "mtbert pretrain, or convert a *ForMaskedLM checkpoint",
                                pretrained.dir.string()));
  MaskedLm model(pretrained.model);
  model->load_head(pretrained.mlm_head, (pretrained.dir / "model.safetensors").string());
  model->eval();
  return model;
}

void save_pretrained(const BertModel& model, const fs::path& dir, const NamedTensors& extra) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UserError(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  nlohmann::json config = model_config_to_json(model->config());
  config["mtbert_format"] = 1;
  write_text_atomically(dir / "config.json", json_text(config, 2) + "\n");
  NamedTensors tensors = module_state(*model);
  tensors.insert(extra.begin(), extra.end());
  write_safetensors(dir / "model.safetensors", tensors, {{"format", "pt"}});
}

}  // namespace mtbert
