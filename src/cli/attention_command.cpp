// mtbert attention: the attention probabilities of every layer and head for
// one text (or text pair), for the report's heatmaps, BERT and DeBERTa alike,
// of a model folder (--model) or of a trained run's encoder (--run).
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

#include "cli/cli_checks.h"
#include "cli/commands.h"
#include "cli/path_checks.h"
#include "core/atomic_file.h"
#include "core/json_file.h"
#include "core/limits.h"
#include "core/tensor_file.h"
#include "core/thread_count.h"
#include "core/token_batch.h"
#include "core/user_error.h"
#include "data/batching.h"
#include "models/encoder_inputs.h"
#include "models/pretrained_model.h"
#include "text/sequence_encoder.h"
#include "text/tokenizer.h"
#include "train/experiment.h"

namespace mtbert::cli {

namespace {

namespace fs = std::filesystem;

struct AttentionArgs {
  std::string model_dir;
  std::string run_dir;
  std::string checkpoint = "best";
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

// The encoder whose attention is drawn, with its tokenizer.
struct AttentionSource {
  BertModel model{nullptr};
  ModelConfig config;
  std::unique_ptr<Tokenizer> tokenizer;
  std::string name;  // what the sidecar records as "model"
};

AttentionSource from_model_folder(const std::string& dir) {
  PretrainedModel pretrained = load_pretrained(dir);
  return {pretrained.model, pretrained.config, load_tokenizer(dir), dir};
}

// A run's encoder after fine-tuning, from one of its checkpoints.
AttentionSource from_run(const std::string& dir, const std::string& checkpoint) {
  Experiment e = open_run(dir, checkpoint).experiment;
  e.model->to(torch::kCPU);
  e.model->eval();
  return {e.model->bert, e.model_config, std::move(e.tokenizer), fmt::format("{} ({})", dir, checkpoint)};
}

void run_attention(const AttentionArgs& args) {
  if (args.text.empty()) throw UserError("attention needs a non-empty --text");
  const fs::path output(args.output);
  if (output.extension() == ".json")
    throw UserError(fmt::format("--output {} must not end in .json (the tokens go to a .tokens.json beside it)",
                                args.output));
  if (args.model_dir.empty() == args.run_dir.empty()) throw UserError("attention needs one of --model or --run");
  check_output_path(output);
  for (const fs::path& written : {output, fs::path(tokens_path(output))})
    check_output_spares_inputs("--output", written, {args.model_dir, args.run_dir});
  set_thread_count(args.threads);
  AttentionSource source =
      args.run_dir.empty() ? from_model_folder(args.model_dir) : from_run(args.run_dir, args.checkpoint);
  if (source.config.num_hidden_layers == 0)
    throw UserError(fmt::format("{}: the encoder has no layers (num_hidden_layers 0), so no attention to show",
                                source.name));
  const auto& tokenizer = source.tokenizer;
  const int64_t max_length = args.max_length > 0 ? args.max_length : source.config.max_position_embeddings;
  Encoding encoding = args.text2.empty() ? encode_single(*tokenizer, args.text, max_length)
                                         : encode_pair(*tokenizer, args.text, args.text2, max_length);
  TokenBatch batch = to_tensors(pad_batch({encoding}, tokenizer->special_ids().pad));
  TokenBatch inputs =
      check_encoder_inputs({batch.input_ids, batch.attention_mask, batch.token_type_ids}, source.config,
                           fmt::format("the tokenizer of {}", source.name));

  c10::InferenceMode inference;  // no autograd records, no version counters
  EncoderOutput out = source.model(inputs.input_ids, inputs.attention_mask, inputs.token_type_ids,
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
  // With EMD the passes take the last layer's place (enhanced_mask_decoder.h).
  const int64_t own_passes = source.config.num_hidden_layers - (source.config.emd_layers > 0 ? 1 : 0);
  for (int64_t i = 0; i < own_passes; ++i) sidecar["layers"].push_back(fmt::format("layer.{}", i));
  for (int64_t i = 0; i < source.config.emd_layers; ++i) sidecar["layers"].push_back(fmt::format("emd.{}", i));
  sidecar["heads"] = source.config.num_attention_heads;
  sidecar["model"] = source.name;
  sidecar["text"] = args.text;
  sidecar["text2"] = args.text2.empty() ? nlohmann::json(nullptr) : nlohmann::json(args.text2);

  // The two files go together: neither stays without the other.
  write_tensor_dict(output, result);
  try {
    write_text_atomically(tokens_path(output), json_text(sidecar, 2) + "\n");
  } catch (...) {
    std::error_code ec;
    fs::remove(output, ec);
    throw;
  }
  spdlog::info("attention of {} layer(s) x {} head(s) over {} tokens -> {} (+ {})", per_layer.size(),
               source.config.num_attention_heads, encoding.ids.size(), output.string(),
               tokens_path(output).string());
}

}  // namespace

void add_attention_command(CLI::App& app) {
  auto args = std::make_shared<AttentionArgs>();
  auto* cmd = app.add_subcommand(
      "attention", "Write every layer's and head's attention probabilities for a text (or pair), for heatmaps");
  auto* model = cmd->add_option("--model", args->model_dir, "Model folder (from scripts/convert_hf_checkpoint.py)")
                    ->check(model_folder());
  auto* run = cmd->add_option("--run", args->run_dir, "A training run's folder: its fine-tuned encoder")
                  ->check(existing_folder())
                  ->excludes(model);
  cmd->add_option("--checkpoint", args->checkpoint, "With --run: best or last")
      ->check(CLI::IsMember({"best", "last"}))
      ->needs(run);
  cmd->add_option("--text", args->text, "The text (first segment)")->required()->check(utf8_text());
  cmd->add_option("--text2", args->text2, "Optional second segment of a pair")->check(utf8_text());
  cmd->add_option("--output", args->output,
                  "Output .pt file (dict: attentions [layers, heads, N, N], input_ids); the tokens go to "
                  "<output without .pt>.tokens.json")
      ->required();
  cmd->add_option("--max-length", args->max_length, "Truncate to this many tokens")
      ->check(whole_number(1, limits::kPositions));
  cmd->add_option("--threads", args->threads, "Intra-op threads (default: one per core)")->check(thread_count());
  cmd->callback([args] { run_attention(*args); });
}

}  // namespace mtbert::cli
