// mtbert info: what a model folder holds.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "cli/commands.h"
#include "cli/path_checks.h"
#include "core/json_file.h"
#include "models/pretrained_model.h"
#include "text/tokenizer.h"

namespace mtbert::cli {

namespace {

void run_info(const std::string& dir, bool as_json) {
  PretrainedModel pretrained = load_pretrained(dir);
  int64_t parameters = 0;
  for (const auto& p : pretrained.model->parameters()) parameters += p.numel();
  // The MLM head's own tensors (its decoder is the word embeddings, counted
  // with the encoder): model.safetensors holds both, the encoder is what
  // fine-tuning starts from.
  int64_t head_parameters = 0;
  for (const auto& [name, tensor] : pretrained.mlm_head) head_parameters += tensor.numel();
  // A folder without a tokenizer is still a model (encode --input takes ids).
  std::unique_ptr<Tokenizer> tokenizer;
  if (has_tokenizer(dir)) {
    tokenizer = load_tokenizer(dir);
    check_tokenizer_fits(*tokenizer, pretrained.config.vocab_size, dir);
  }

  nlohmann::json info = {
      {"model", dir},
      {"config", model_config_to_json(pretrained.config)},
      {"parameters", parameters},
      {"mlm_head_parameters", pretrained.mlm_head.empty() ? nlohmann::json() : nlohmann::json(head_parameters)},
      {"pooler", static_cast<bool>(pretrained.model->pooler)},
      {"tokenizer", tokenizer ? nlohmann::json{{"kind", tokenizer->kind()}, {"vocab_size", tokenizer->vocab_size()}}
                              : nlohmann::json()},
  };
  if (as_json) {
    fmt::print("{}\n", json_text(info, 2));
    return;
  }
  const auto& c = pretrained.config;
  fmt::print("model       {}\n", dir);
  fmt::print("type        {}\n", c.model_type);
  fmt::print("layers      {} x hidden {} ({} heads, FFN {}, {})\n", c.num_hidden_layers, c.hidden_size,
             c.num_attention_heads, c.intermediate_size, c.hidden_act);
  fmt::print("positions   {}   token types {}   vocab {}\n", c.max_position_embeddings, c.type_vocab_size,
             c.vocab_size);
  if (c.disentangled()) {
    std::string terms;
    for (const auto& t : c.pos_att_type) terms += (terms.empty() ? "" : "|") + t;
    fmt::print("attention   disentangled ({}, k {}{}{}), absolute positions {}\n", terms.empty() ? "c2c" : terms,
               c.relative_span(), c.position_buckets > 0 ? ", log buckets" : "",
               c.share_att_key ? ", shared keys" : "", c.position_biased_input ? "yes" : "no");
  }
  if (c.emd_layers > 0) fmt::print("EMD         {} pass(es) of the last layer\n", c.emd_layers);
  fmt::print("pooler      {}\n", pretrained.model->pooler ? "yes" : "no");
  fmt::print("parameters  {} ({:.1f} M) in the encoder", parameters, parameters / 1e6);
  if (pretrained.mlm_head.empty()) fmt::print("; no MLM head\n");
  else fmt::print(", {} more in the MLM head (its decoder is the word embeddings)\n", head_parameters);
  if (tokenizer) fmt::print("tokenizer   {} ({} pieces)\n", tokenizer->kind(), tokenizer->vocab_size());
  else fmt::print("tokenizer   none (vocab.txt or spm.model; encode takes --input ids without one)\n");
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("info", "Describe a model folder: config, parameter count, tokenizer");
  cmd->add_option("--model", *dir, "Model folder")->required()->check(model_folder());
  cmd->add_flag("--json", *as_json, "Print JSON");
  cmd->callback([dir, as_json] { run_info(*dir, *as_json); });
}

}  // namespace mtbert::cli
