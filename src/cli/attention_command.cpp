// mtbert attention: the attention probabilities of every layer and head for
// one text (or text pair), for the report's heatmaps, BERT and DeBERTa alike.
//
// Writes two files:
//   OUTPUT (.pt)           torch.save dict: "attentions" float32 [layers, heads, N, N]
//                          (row i: how query token i spreads over the keys),
//                          "input_ids" int64 [N], "token_type_ids" int64 [N] (BERT)
//   OUTPUT minus .pt + .tokens.json
//                          {"tokens": [N pieces], "layers": ["layer.0", ..., "emd.0", ...],
//                           "heads": H, "model": DIR, "text": ..., "text2": ...}
// so that Python needs only torch.load and json.load to draw them.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "cli/commands.h"
#include "core/atomic_file.h"
#include "core/runtime.h"
#include "core/tensor_file.h"
#include "core/user_error.h"
#include "models/encoder_inputs.h"
#include "models/pretrained_model.h"
#include "tasks/sequence_encoder.h"
#include "tasks/token_batch.h"
#include "tasks/tokenizer.h"

namespace mtbert::cli {

namespace {

namespace fs = std::filesystem;

struct AttentionArgs {
  std::string model_dir;
  std::string text;
  std::string text2;
  std::string output;
  int64_t max_length = 0;
  int threads = 0;
};

fs::path tokens_path(const fs::path& output) {
  fs::path p = output;
  if (p.extension() == ".pt") p.replace_extension();
  p += ".tokens.json";
  return p;
}

void run_attention(const AttentionArgs& args) {
  if (args.text.empty()) throw UserError("attention needs a non-empty --text");
  const fs::path output(args.output);
  if (output.extension() == ".json")
    throw UserError(fmt::format("--output {} must not end in .json (the tokens go to a .tokens.json beside it)",
                                args.output));
  set_thread_count(args.threads);
  PretrainedModel pretrained = load_pretrained(args.model_dir);
  auto tokenizer = load_tokenizer(args.model_dir);
  const int64_t max_length = args.max_length > 0 ? args.max_length : pretrained.config.max_position_embeddings;
  Encoding encoding = args.text2.empty() ? encode_single(*tokenizer, args.text, max_length)
                                         : encode_pair(*tokenizer, args.text, args.text2, max_length);
  TokenBatch batch = to_tensors(pad_batch({encoding}, tokenizer->special_ids().pad));
  EncoderInputs inputs =
      check_encoder_inputs({batch.input_ids, batch.attention_mask, batch.token_type_ids}, pretrained.config,
                           fmt::format("the tokenizer of {}", args.model_dir));

  torch::NoGradGuard no_grad;
  EncoderOutput out = pretrained.model(inputs.input_ids, inputs.attention_mask, inputs.token_type_ids,
                                       /*output_attentions=*/true);
  std::vector<torch::Tensor> per_layer;
  for (const auto& probs : out.attentions) per_layer.push_back(probs[0].to(torch::kFloat));
  std::map<std::string, torch::Tensor> result{{"attentions", torch::stack(per_layer)},
                                              {"input_ids", inputs.input_ids[0].clone()}};
  if (inputs.token_type_ids.defined()) result.emplace("token_type_ids", inputs.token_type_ids[0].clone());

  nlohmann::json sidecar;
  sidecar["tokens"] = nlohmann::json::array();
  for (int64_t id : encoding.ids) sidecar["tokens"].push_back(tokenizer->id_to_piece(id));
  sidecar["layers"] = nlohmann::json::array();
  for (int64_t i = 0; i < pretrained.config.num_hidden_layers; ++i) sidecar["layers"].push_back(fmt::format("layer.{}", i));
  for (int64_t i = 0; i < pretrained.config.emd_layers; ++i) sidecar["layers"].push_back(fmt::format("emd.{}", i));
  sidecar["heads"] = pretrained.config.num_attention_heads;
  sidecar["model"] = args.model_dir;
  sidecar["text"] = args.text;
  sidecar["text2"] = args.text2.empty() ? nlohmann::json(nullptr) : nlohmann::json(args.text2);

  write_tensor_dict(output, result);
  write_text_atomically(tokens_path(output), sidecar.dump(2) + "\n");
  spdlog::info("attention of {} layer(s) x {} head(s) over {} tokens -> {} (+ {})", per_layer.size(),
               pretrained.config.num_attention_heads, encoding.ids.size(), output.string(),
               tokens_path(output).string());
}

}  // namespace

void add_attention_command(CLI::App& app) {
  auto args = std::make_shared<AttentionArgs>();
  auto* cmd = app.add_subcommand(
      "attention", "Write every layer's and head's attention probabilities for a text (or pair), for heatmaps");
  cmd->add_option("--model", args->model_dir, "Model folder (from scripts/convert_hf_checkpoint.py)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--text", args->text, "The text (first segment)")->required();
  cmd->add_option("--text2", args->text2, "Optional second segment of a pair");
  cmd->add_option("--output", args->output,
                  "Output .pt file (dict: attentions [layers, heads, N, N], input_ids); the tokens go to "
                  "<output without .pt>.tokens.json")
      ->required();
  cmd->add_option("--max-length", args->max_length, "Truncate to this many tokens")->check(CLI::PositiveNumber);
  cmd->add_option("--threads", args->threads, "Intra-op threads (default: one per core)");
  cmd->callback([args] { run_attention(*args); });
}

}  // namespace mtbert::cli
