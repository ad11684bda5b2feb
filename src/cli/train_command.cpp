// mtbert train: run an experiment from YAML, or resume an interrupted run.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>

#include "cli/cli_checks.h"
#include "cli/commands.h"
#include "cli/path_checks.h"
#include "cli/run_job.h"
#include "cli/run_reporting.h"
#include "config/experiment_config.h"
#include "core/runtime.h"
#include "train/experiment.h"
#include "train/trainer.h"

namespace mtbert::cli {

namespace {

namespace fs = std::filesystem;

// A fine-tuning run, for the runner of train and pretrain (cli/run_job.h).
struct FineTuning {
  using Config = ExperimentConfig;
  using Job = Experiment;
  using Trainer = mtbert::Trainer;
  static constexpr const char* command = "train";
  static constexpr const char* config_file = "CONFIG.yaml";
  static Config load(const fs::path& file, const std::vector<std::string>& overrides,
                     const std::vector<fs::path>& overlays) {
    return load_experiment(file, overrides, overlays);
  }
  static Job start(const Config& config, const RunDirectory& run) { return start_experiment(config, run); }
  static Job join(const Config& config, const RunDirectory& run) { return join_experiment(config, run); }
  static Job reopen(const RunDirectory& run) { return open_run(run.root(), /*checkpoint=*/"").experiment; }
  static void print_result(const nlohmann::json& summary, const RunDirectory& run) {
    fmt::print("{}", summary_table(summary));
    fmt::print("run folder: {}\n", run.root().string());
  }
  static void print_finished(const RunState& state) { fmt::print("{}", summary_table(state.summary)); }
};

}  // namespace

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("train", "Train an experiment (YAML), or resume an interrupted run");
  cmd->add_option("config", args->positional, "CONFIG.yaml, then key.path=value overrides");
  cmd->add_option("--out", args->out,
                  "Run folder (default: the config's output_dir, runs/<name>; <output_dir>-2, -3, ... once it "
                  "holds a finished run)");
  cmd->add_option("--overlay", args->overlays,
                  "YAML file merged over the experiment (after its extends, before key=value overrides); repeatable")
      ->check(existing_file())
      ->allow_extra_args(false);
  cmd->add_option("--resume", args->resume, "Continue the interrupted run in this folder")->check(existing_folder());
  cmd->add_option("--threads", args->threads, "Intra-op threads (0: one per core; default: the config's)")
      ->check(thread_count());
  cmd->add_option("--nproc", args->nproc,
                  "Train data-parallel on N local ranks (child processes; the cores split between them)")
      ->check(local_rank_count());
  cmd->add_flag("--force", args->force,
                "With --resume: resume even though the run's config.resolved.yaml changed since its last checkpoint "
                "(each change is logged)");
  cmd->add_flag("--no-progress", args->no_progress, "No progress bar (evaluations are still logged)");
  cmd->callback([args] {
    args->command = command_line();
    run_job<FineTuning>(*args);
  });
}

}  // namespace mtbert::cli
