// mtbert fill-mask: what a model folder's masked-language-model head puts in
// each [MASK] of a text, as the top-k tokens with their probabilities.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>

#include "cli/cli_checks.h"
#include "cli/commands.h"
#include "cli/path_checks.h"
#include "core/json_file.h"
#include "core/limits.h"
#include "core/thread_count.h"
#include "core/user_error.h"
#include "data/batching.h"
#include "models/pretrained_model.h"
#include "text/sequence_encoder.h"
#include "text/tokenizer.h"

namespace mtbert::cli {

namespace {

struct FillMaskArgs {
  std::string model_dir;
  std::string text;
  int64_t top_k = 5;
  bool as_json = false;
  int threads = 0;
};

void run_fill_mask(const FillMaskArgs& args) {
  set_thread_count(args.threads);
  const PretrainedModel pretrained = load_pretrained(args.model_dir);
  MaskedLm model = masked_lm_of(pretrained);
  const auto tokenizer = load_tokenizer(args.model_dir);
  check_tokenizer_fits(*tokenizer, pretrained.config.vocab_size, args.model_dir);
  const Encoding encoding = encode_single(*tokenizer, args.text, pretrained.config.max_position_embeddings);
  const int64_t mask_id = tokenizer->special_ids().mask;
  std::vector<int64_t> masks;
  for (size_t i = 0; i < encoding.ids.size(); ++i)
    if (encoding.ids[i] == mask_id) masks.push_back(static_cast<int64_t>(i));
  if (masks.empty()) {
    const std::vector<int64_t> whole = tokenizer->encode(args.text);
    if (std::find(whole.begin(), whole.end(), mask_id) != whole.end())
      throw UserError(fmt::format("--text: its {} lies past the model's {} positions, where the text is cut; shorten "
                                  "the text before it",
                                  tokenizer->id_to_piece(mask_id), pretrained.config.max_position_embeddings));
    throw UserError(fmt::format("--text holds no {} token to fill", tokenizer->id_to_piece(mask_id)));
  }

  c10::InferenceMode inference;  // no autograd records, no version counters
  const TokenBatch batch = to_tensors(pad_batch({encoding}, tokenizer->special_ids().pad));
  const auto positions = torch::tensor(masks, torch::kLong);
  const auto probabilities = torch::softmax(model->logits_at(batch, positions).to(torch::kDouble), -1);
  const int64_t k = std::min<int64_t>(args.top_k, probabilities.size(1));
  const auto [values, ids] = probabilities.topk(k, -1);

  nlohmann::json out = nlohmann::json::array();
  for (size_t m = 0; m < masks.size(); ++m) {
    nlohmann::json candidates = nlohmann::json::array();
    for (int64_t j = 0; j < k; ++j)
      candidates.push_back({{"token", tokenizer->id_to_piece(ids[m][j].item<int64_t>())},
                            {"id", ids[m][j].item<int64_t>()},
                            {"probability", values[m][j].item<double>()}});
    out.push_back({{"position", masks[m]}, {"candidates", candidates}});
  }
  if (args.as_json) {
    fmt::print("{}\n", json_text(out, 2));
    return;
  }
  for (size_t m = 0; m < masks.size(); ++m) {
    fmt::print("mask {} (token {}):\n", m + 1, masks[m]);
    for (const auto& c : out[m]["candidates"])
      fmt::print("  {:<16} {:.4f}\n", c["token"].get<std::string>(), c["probability"].get<double>());
  }
}

}  // namespace

void add_fill_mask_command(CLI::App& app) {
  auto args = std::make_shared<FillMaskArgs>();
  auto* cmd = app.add_subcommand("fill-mask", "The top-k tokens a model folder's MLM head predicts for each [MASK]");
  cmd->add_option("--model", args->model_dir, "Model folder with an MLM head (mtbert pretrain's <run>/model)")
      ->required()
      ->check(model_folder());
  cmd->add_option("--text", args->text, "Text with one or more [MASK] tokens")->required()->check(utf8_text());
  cmd->add_option("--top-k", args->top_k, "Candidates per mask")->check(whole_number(1, limits::kVocabSize));
  cmd->add_flag("--json", args->as_json, "Print JSON");
  cmd->add_option("--threads", args->threads, "Intra-op threads (default: one per core)")->check(thread_count());
  cmd->callback([args] { run_fill_mask(*args); });
}

}  // namespace mtbert::cli
