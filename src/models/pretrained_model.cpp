#include "models/pretrained_model.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "core/atomic_file.h"
#include "core/safetensors.h"
#include "core/user_error.h"
#include "models/module_state.h"

namespace mtbert {

namespace fs = std::filesystem;

PretrainedModel load_pretrained(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw UserError(fmt::format("model folder {} does not exist", dir.string()));
  const fs::path config_path = dir / "config.json";
  const fs::path weights_path = dir / "model.safetensors";
  if (!fs::exists(config_path))
    throw UserError(fmt::format("{} has no config.json (convert HuggingFace folders with "
                                "scripts/convert_hf_checkpoint.py)",
                                dir.string()));
  if (!fs::exists(weights_path))
    throw UserError(fmt::format("{} has no model.safetensors (convert HuggingFace folders with "
                                "scripts/convert_hf_checkpoint.py)",
                                dir.string()));

  PretrainedModel result;
  result.dir = dir;
  result.config = read_model_config(config_path);
  SafetensorsFile weights = read_safetensors(weights_path);
  const bool with_pooler = weights.tensors.count("pooler.dense.weight") > 0;
  result.model = BertModel(result.config, BertModelOptions{with_pooler});
  load_module_state(*result.model, weights.tensors, weights_path.string());
  result.model->eval();
  return result;
}

void save_pretrained(const BertModel& model, const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UserError(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  nlohmann::json config = model_config_to_json(model->config());
  config["mtbert_format"] = 1;
  write_text_atomically(dir / "config.json", config.dump(2) + "\n");
  write_safetensors(dir / "model.safetensors", module_state(*model), {{"format", "pt"}});
}

}  // namespace mtbert
