// mtbert train: run an experiment from YAML, or resume an interrupted run.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <filesystem>

#include "cli/commands.h"
#include "cli/run_folders.h"
#include "cli/run_reporting.h"
#include "config/experiment_config.h"
#include "core/atomic_file.h"
#include "core/runtime.h"
#include "core/user_error.h"
#include "train/experiment.h"
#include "train/interrupt.h"
#include "train/run_directory.h"
#include "train/run_lock.h"
#include "train/run_status.h"
#include "train/trainer.h"

namespace mtbert::cli {

namespace {

namespace fs = std::filesystem;

struct TrainArgs {
  std::vector<std::string> positional;  // CONFIG.yaml and key=value overrides
  std::string out;
  std::vector<std::string> overlays;
  std::string resume;
  int threads = -1;  // -1: the config's
  bool no_progress = false;
  std::string command;
};

void run_training(Experiment& experiment, const RunDirectory& run, bool resume, const TrainArgs& args) {
  Trainer trainer(experiment, run);
  if (resume) trainer.restore_last_checkpoint();
  install_stop_signal_handlers();
  TrainerHooks hooks;
  hooks.stop_requested = [] { return stop_requested(); };
  hooks.show_progress = !args.no_progress;
  if (!resume) {
    run.write_summary({{"name", experiment.config.name}, {"status", "running"}, {"command", args.command}});
  }
  const TrainEnd end = trainer.train(hooks);
  const auto summary = trainer.finish(end, args.command);
  if (end == TrainEnd::interrupted) {
    set_exit_code(128 + stop_signal());
    return;
  }
  fmt::print("{}", summary_table(summary));
  fmt::print("run folder: {}\n", run.root().string());
}

void run_train(TrainArgs& args) {
  const ConfigArguments given = split_config_arguments(args.positional);
  if (!args.resume.empty()) {
    if (!given.path.empty()) throw UserError("give either CONFIG.yaml (a new run) or --resume RUN_DIR, not both");
    if (!given.overrides.empty() || !args.overlays.empty())
      throw UserError("a resumed run keeps its config; key=value overrides and --overlay apply to new runs only");
    const RunState state = resumable_run(args.resume);
    if (run_is_done(state.status)) {
      spdlog::info("{} is already finished", args.resume);
      fmt::print("{}", summary_table(state.summary));
      return;
    }
    const RunLock lock(args.resume);
    auto [run, experiment] = open_run(args.resume, /*checkpoint=*/"");
    set_thread_count(args.threads >= 0 ? args.threads : static_cast<int>(experiment.config.threads));
    run_training(experiment, run, /*resume=*/true, args);
    return;
  }

  if (given.path.empty()) throw UserError("train needs CONFIG.yaml (or --resume RUN_DIR)");
  const ExperimentConfig config =
      load_experiment(given.path, given.overrides, std::vector<fs::path>(args.overlays.begin(), args.overlays.end()));
  const RunDirectory run(args.out.empty() ? fs::path(config.output_dir) : fs::path(args.out));
  in_fresh_run_folder(run, "train", [&] {
    const int threads = set_thread_count(args.threads >= 0 ? args.threads : static_cast<int>(config.threads));
    spdlog::info("run {} -> {} ({} threads)", config.name, run.root().string(), threads);
    Experiment experiment = start_experiment(config, run);
    run_training(experiment, run, /*resume=*/false, args);
  });
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  auto* cmd = app.add_subcommand("train", "Train an experiment (YAML), or resume an interrupted run");
  cmd->add_option("config", args->positional, "CONFIG.yaml, then key.path=value overrides");
  cmd->add_option("--out", args->out, "Run folder (default: the config's output_dir, runs/<name>)");
  cmd->add_option("--overlay", args->overlays,
                  "YAML file merged over the experiment (after its extends, before key=value overrides); repeatable")
      ->check(CLI::ExistingFile)
      ->allow_extra_args(false);
  cmd->add_option("--resume", args->resume, "Continue the interrupted run in this folder")->check(CLI::ExistingDirectory);
  cmd->add_option("--threads", args->threads, "Intra-op threads (0: one per core; default: the config's)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-progress", args->no_progress, "No progress bar (evaluations are still logged)");
  cmd->callback([args] {
    args->command = command_line();
    run_train(*args);
  });
}

}  // namespace mtbert::cli
