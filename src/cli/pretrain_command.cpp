// mtbert pretrain: masked-language-model pretraining from YAML
// (experiments/pretrain/), or the resumption of an interrupted run.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>

#include "cli/cli_checks.h"
#include "cli/commands.h"
#include "cli/path_checks.h"
#include "cli/run_job.h"
#include "config/pretrain_config.h"
#include "core/runtime.h"
#include "train/experiment.h"
#include "train/pretrainer.h"

namespace mtbert::cli {

namespace {

namespace fs = std::filesystem;

// A pretraining run, for the runner of train and pretrain (cli/run_job.h).
struct MaskedLmPretraining {
  using Config = PretrainConfig;
  using Job = Pretraining;
  using Trainer = Pretrainer;
  static constexpr const char* command = "pretrain";
  static constexpr const char* config_file = "PRETRAIN.yaml";
  static Config load(const fs::path& file, const std::vector<std::string>& overrides,
                     const std::vector<fs::path>& overlays) {
    return load_pretrain_config(file, overrides, overlays);
  }
  static Job start(const Config& config, const RunDirectory& run) { return start_pretraining(config, run); }
  static Job join(const Config& config, const RunDirectory& run) { return join_pretraining(config, run); }
  static Job reopen(const RunDirectory& run) { return reopen_pretraining(run); }
  static void print_result(const nlohmann::json& summary, const RunDirectory&) {
    const auto& last = summary["last"];
    if (last.contains("dev"))
      fmt::print("held-out MLM: loss {:.4f}  accuracy {:.4f}  perplexity {:.2f}\n",
                 last["dev"]["mlm"]["loss"].get<double>(), last["dev"]["mlm"]["accuracy"].get<double>(),
                 last["dev"]["mlm"]["perplexity"].get<double>());
    fmt::print("model folder: {}\n", summary["model_folder"].get<std::string>());
  }
  static void print_finished(const RunState&) {}  // the log line says it
};

}  // namespace

void add_pretrain_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("pretrain", "Masked-language-model pretraining (YAML), or resume an interrupted run");
  cmd->add_option("config", args->positional, "PRETRAIN.yaml, then key.path=value overrides");
  cmd->add_option("--out", args->out,
                  "Run folder (default: the config's output_dir, runs/<name>; <output_dir>-2, -3, ... once it "
                  "holds a finished run)");
  cmd->add_option("--overlay", args->overlays, "YAML file merged over the config; repeatable")
      ->check(existing_file())
      ->allow_extra_args(false);
  cmd->add_option("--resume", args->resume, "Continue the interrupted run in this folder")->check(existing_folder());
  cmd->add_option("--threads", args->threads, "Intra-op threads (0: one per core; default: the config's)")
      ->check(thread_count());
  cmd->add_option("--nproc", args->nproc,
                  "Pretrain data-parallel on N local ranks (child processes; the cores split between them)")
      ->check(local_rank_count());
  cmd->add_flag("--force", args->force,
                "With --resume: resume even though the run's config.resolved.yaml changed since its last checkpoint "
                "(each change is logged)");
  cmd->add_flag("--no-progress", args->no_progress, "No progress bar (evaluations are still logged)");
  cmd->callback([args] {
    args->command = command_line();
    run_job<MaskedLmPretraining>(*args);
  });
}

}  // namespace mtbert::cli
