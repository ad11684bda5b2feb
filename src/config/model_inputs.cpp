#include "config/model_inputs.h"

#include <filesystem>

#include <fmt/format.h>

namespace mtbert {

std::vector<std::pair<std::string, std::string>> model_inputs(const ModelSection& model) {
  std::vector<std::pair<std::string, std::string>> inputs;
  if (!model.pretrained.empty()) inputs.emplace_back("model.pretrained", model.pretrained);
  const TokenizerConfig& t = model.tokenizer;
  if (t.kind == TokenizerKind::wordpiece) inputs.emplace_back("model.tokenizer.vocab", t.vocab);
  if (t.kind == TokenizerKind::sentencepiece) {
    std::error_code ec;
    if (t.train_from.empty()) {
      inputs.emplace_back("model.tokenizer.model", t.model);
    } else if (t.model.empty() || !std::filesystem::exists(t.model, ec)) {
      // "tasks" is the tasks' training texts, checked as the tasks' files.
      for (const auto& file : t.train_from)
        if (file != "tasks") inputs.emplace_back("model.tokenizer.train_from", file);
    }
  }
  return inputs;
}

std::optional<std::string> first_missing(const std::vector<std::pair<std::string, std::string>>& inputs) {
  std::error_code ec;
  for (const auto& [key, path] : inputs)
    if (!path.empty() && !std::filesystem::exists(path, ec)) return fmt::format("{}: {}", key, path);
  return std::nullopt;
}

}  // namespace mtbert
