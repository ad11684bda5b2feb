// mtbert encode: run a converted model on token ids from a file, or on text.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "cli/cli_checks.h"
#include "cli/commands.h"
#include "cli/path_checks.h"
#include "core/atomic_file.h"
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

namespace mtbert::cli {

namespace {

struct EncodeArgs {
  std::string model_dir;
  std::string input;
  std::vector<std::string> texts;
  std::string output;
  int64_t max_length = 0;
  int threads = 0;
};

TokenBatch inputs_from_file(const std::string& path, const ModelConfig& config) {
  auto dict = read_tensor_dict(path);
  for (const auto& [key, value] : dict) {
    if (key != "input_ids" && key != "attention_mask" && key != "token_type_ids")
      throw UserError(fmt::format("{}: unexpected entry \"{}\" (expected input_ids, attention_mask, "
                                  "token_type_ids)",
                                  path, key));
  }
  auto get = [&](const char* key) { return dict.count(key) ? dict.at(key) : torch::Tensor(); };
  if (!dict.count("attention_mask")) throw UserError(fmt::format("{}: attention_mask is missing", path));
  return check_encoder_inputs({get("input_ids"), get("attention_mask"), get("token_type_ids")}, config, path);
}

TokenBatch inputs_from_texts(const EncodeArgs& args, const ModelConfig& config) {
  auto tokenizer = load_tokenizer(args.model_dir);
  check_tokenizer_fits(*tokenizer, config.vocab_size, args.model_dir);
  const int64_t max_length = args.max_length > 0 ? args.max_length : config.max_position_embeddings;
  std::vector<Encoding> encodings;
  for (const auto& text : args.texts) encodings.push_back(encode_single(*tokenizer, text, max_length));
  TokenBatch batch = to_tensors(pad_batch(encodings, tokenizer->special_ids().pad));
  const std::string where = fmt::format("the tokenizer of {}", args.model_dir);
  return check_encoder_inputs({batch.input_ids, batch.attention_mask, batch.token_type_ids}, config, where);
}

void run_encode(const EncodeArgs& args) {
  check_output_path(args.output);
  check_output_spares_inputs("--output", args.output, {args.model_dir, args.input});
  set_thread_count(args.threads);
  PretrainedModel pretrained = load_pretrained(args.model_dir);
  TokenBatch inputs = args.input.empty() ? inputs_from_texts(args, pretrained.config)
                                            : inputs_from_file(args.input, pretrained.config);
  // Read from the (host) mask itself: a file's mask may hold zeros anywhere.
  // Without any, attention runs without a mask bias.
  inputs.padded = inputs.attention_mask.eq(0).any().item<bool>();

  c10::InferenceMode inference;  // no autograd records, no version counters
  EncoderOutput out = pretrained.model(inputs.input_ids, inputs.encoder_mask(), inputs.token_type_ids);

  std::map<std::string, torch::Tensor> result{{"last_hidden_state", out.last_hidden_state}};
  if (out.pooler_output.defined()) result.emplace("pooler_output", out.pooler_output);
  // The head reads the same last hidden state: project it, no second pass.
  if (!pretrained.mlm_head.empty())
    result.emplace("mlm_logits", masked_lm_of(pretrained)->predictions(
                                     out.last_hidden_state, pretrained.model->embeddings->word_embeddings->weight));
  if (!args.texts.empty()) {
    // With --text the ids are ours: hand them back so the output is self-describing.
    result.emplace("input_ids", inputs.input_ids);
    result.emplace("attention_mask", inputs.attention_mask);
    // None for models without token types (DeBERTa-v3): they ignore them.
    if (inputs.token_type_ids.defined()) result.emplace("token_type_ids", inputs.token_type_ids);
  }
  write_tensor_dict(args.output, result);
  spdlog::info("encoded {} sequence(s) of length {} -> {}", inputs.input_ids.size(0), inputs.input_ids.size(1),
               args.output);
}

}  // namespace

void add_encode_command(CLI::App& app) {
  auto args = std::make_shared<EncodeArgs>();
  auto* cmd = app.add_subcommand("encode", "Run a model folder; write last_hidden_state, pooler_output and, with an MLM head, mlm_logits");
  cmd->add_option("--model", args->model_dir, "Model folder (from scripts/convert_hf_checkpoint.py)")
      ->required()
      ->check(model_folder());
  auto* input = cmd->add_option("--input", args->input,
                                "torch.save'd dict with int64 input_ids [B,N], attention_mask [B,N] and "
                                "optional token_type_ids")
                    ->check(existing_file());
  auto* text = cmd->add_option("--text", args->texts, "Text(s) to encode with the model folder's tokenizer")
                   ->check(utf8_text());
  input->excludes(text);
  cmd->add_option("--output", args->output, "Output .pt file (a dict torch.load reads)")->required();
  cmd->add_option("--max-length", args->max_length, "Truncate --text inputs to this many tokens")
      ->check(whole_number(1, limits::kPositions));
  cmd->add_option("--threads", args->threads, "Intra-op threads (default: one per core)")->check(thread_count());
  cmd->callback([args] {
    if (args->input.empty() && args->texts.empty()) throw UserError("encode needs --input FILE.pt or --text TEXT");
    run_encode(*args);
  });
}

}  // namespace mtbert::cli
