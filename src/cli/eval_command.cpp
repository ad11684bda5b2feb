// mtbert eval: evaluate a trained run's checkpoint on dev or test data.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "cli/cli_checks.h"
#include "cli/commands.h"
#include "cli/path_checks.h"
#include "core/json_file.h"
#include "core/thread_count.h"
#include "core/user_error.h"
#include "data/prediction_file.h"
#include "train/evaluator.h"
#include "train/experiment.h"
#include "train/run_directory.h"

namespace mtbert::cli {

namespace {

struct EvalArgs {
  std::string run_dir;
  std::string split = "dev";
  std::string checkpoint = "best";
  std::vector<std::string> data;  // task=path
  std::string predictions;        // folder for the leaderboard files
  bool json = false;
  int threads = 0;
};

// What evaluating `split` of a run reads: its config, model config, tokenizer
// and checkpoints, and the split's data files.
std::vector<std::filesystem::path> files_read(const RunDirectory& run, const Experiment& experiment, Split split) {
  std::vector<std::filesystem::path> read = {run.resolved_config(), run.model_config(), run.tokenizer_dir(),
                                             run.checkpoints_dir()};
  for (const auto& task : experiment.tasks) {
    const std::string& data = split == Split::dev ? task.config.dev : task.config.test;
    if (!data.empty()) read.emplace_back(path_from_run_start(data, experiment.working_directory));
  }
  return read;
}

void run_eval(const EvalArgs& args) {
  auto [run, experiment] = open_run(args.run_dir, args.checkpoint);
  const Split split = args.split == "test" ? Split::test : Split::dev;
  for (const auto& entry : args.data) {
    const auto task_path = name_and_value(entry);
    if (!task_path) throw UserError(fmt::format("--data \"{}\": expected TASK=PATH", entry));
    override_split_path(experiment, task_path->first, split, task_path->second);
  }
  set_thread_count(args.threads);
  load_split(experiment, split);
  // Eager whatever the run's train.cuda_graphs: one pass, whose buckets'
  // first batches would run eagerly anyway, and the unpadded batches' own
  // figures (graphs pad them, which moves the figures to rounding).
  Evaluation evaluation = evaluate(experiment, split);
  if (evaluation.tasks.empty())
    throw UserError(fmt::format("no task of {} has a {} split (add one with --data TASK=PATH)", args.run_dir,
                                args.split));
  const std::filesystem::path out =
      args.predictions.empty() ? run.predictions_dir() : std::filesystem::path(args.predictions);
  const auto read = files_read(run, experiment, split);
  check_output_spares_inputs("--predictions", out, read);
  for (const auto& task : evaluation.tasks)
    check_output_spares_inputs("--predictions", out / prediction_file_name(task.task, split_name(split)), read);
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  write_predictions(experiment, evaluation, out);
  if (args.json) {
    nlohmann::json result = {{"split", args.split}, {"checkpoint", args.checkpoint},
                             {"tasks", evaluation_json(evaluation)}};
    if (evaluation.has_overall) result["overall"] = evaluation.overall;
    fmt::print("{}\n", json_text(result, 2));
  } else {
    fmt::print("{}", evaluation_table(evaluation));
  }
  spdlog::info("predictions written to {}", out.string());
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval", "Evaluate a run's checkpoint on dev or test data; write predictions");
  cmd->add_option("run", args->run_dir, "Run folder")->required()->check(existing_folder());
  cmd->add_option("--split", args->split, "dev or test")->check(CLI::IsMember({"dev", "test"}));
  cmd->add_option("--checkpoint", args->checkpoint, "best or last")->check(CLI::IsMember({"best", "last"}));
  cmd->add_option("--data", args->data, "TASK=PATH: evaluate TASK on this file instead of the config's");
  cmd->add_option("--predictions", args->predictions, "Folder for the prediction files (default: RUN/predictions)");
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->add_option("--threads", args->threads, "Intra-op threads (0: one per core)")->check(thread_count());
  cmd->callback([args] { run_eval(*args); });
}

}  // namespace mtbert::cli
