// mtbert train: run an experiment from YAML, or resume an interrupted run.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <csignal>
#include <filesystem>
#include <optional>

#include "cli/cli_checks.h"
#include "cli/commands.h"
#include "cli/path_checks.h"
#include "cli/run_folders.h"
#include "cli/run_ranks.h"
#include "cli/run_reporting.h"
#include "config/experiment_config.h"
#include "core/atomic_file.h"
#include "core/runtime.h"
#include "core/thread_count.h"
#include "core/user_error.h"
#include "dist/communicator.h"
#include "dist/launch_env.h"
#include "models/pretrained_model.h"
#include "train/experiment.h"
#include "train/interrupt.h"
#include "train/run_directory.h"
#include "train/run_lock.h"
#include "train/run_status.h"
#include "train/trainer.h"

namespace mtbert::cli {

namespace {

namespace fs = std::filesystem;

// --threads is recorded as the run's `threads` (config.resolved.yaml), so that
// the record says what the run used and a resume without it uses the same.
// A new run's config, its files checked before the run folder, the tokenizer
// or the ranks start: a missing one is named with its key.
ExperimentConfig load_given_experiment(const RunArgs& args, const ConfigArguments& given) {
  ExperimentConfig config =
      load_experiment(given.path, given.overrides, std::vector<fs::path>(args.overlays.begin(), args.overlays.end()));
  if (args.threads >= 0) config.threads = args.threads;
  check_device_available(config.device);  // before the run folder, the tokenizer or the data
  if (!config.model.pretrained.empty()) check_model_folder(config.model.pretrained);  // says how to make one
  if (const auto missing = first_missing_input(config))
    throw UserError(fmt::format("{}: {} does not exist (relative paths start in the current folder, {})",
                                given.path, *missing, fs::current_path().string()));
  return config;
}

void run_training(Experiment& experiment, const RunDirectory& run, bool resume, const RunArgs& args,
                  Communicator* comm) {
  const bool main_rank = !comm || comm->is_main();
  Trainer trainer(experiment, run, comm);
  if (resume) trainer.restore_last_checkpoint();
  install_stop_signal_handlers();
  TrainerHooks hooks;
  hooks.stop_requested = [] { return stop_requested(); };
  hooks.show_progress = !args.no_progress && main_rank;
  if (!resume && main_rank) {
    run.write_summary({{"name", experiment.config.name},
                       {"status", "running"},
                       {"command", args.command},
                       {"working_directory", experiment.working_directory.string()}});
  }
  const TrainEnd end = trainer.train(hooks);
  const auto summary = trainer.finish(end, args.command);
  if (end == TrainEnd::interrupted) {
    // A rank stopped by another rank's signal ends as if it had had SIGTERM.
    set_exit_code(128 + (stop_signal() != 0 ? stop_signal() : SIGTERM));
    return;
  }
  if (!main_rank) return;
  fmt::print("{}", summary_table(summary));
  fmt::print("run folder: {}\n", run.root().string());
}

// One rank of a data-parallel job (torchrun, srun, --nproc): rank 0 owns the
// run folder (creates, locks and writes it); the others read what it wrote.
void run_train_rank(RunArgs& args, const LaunchEnv& env, const ConfigArguments& given) {
  if (env.rank > 0) spdlog::set_level(spdlog::level::warn);  // rank 0 speaks for the job
  if (!args.resume.empty()) {
    const RunDirectory run(args.resume);
    const ExperimentConfig config = load_experiment(run.resolved_config());
    Communicator comm(env, communicator_options(config.distributed, config.device));
    std::optional<RunLock> lock;
    bool done = false;
    if (comm.is_main()) {
      lock.emplace(args.resume);  // first: the run's status is read under it
      const RunState state = resumable_run(args.resume, "train");
      done = run_is_done(state.status);
      if (done) fmt::print("{}", summary_table(state.summary));
    }
    if (comm.any(done)) return;
    auto [opened, experiment] = open_run(args.resume, /*checkpoint=*/"");
    rank_thread_count(args, experiment.config.threads, env);
    run_training(experiment, opened, /*resume=*/true, args, &comm);
    return;
  }
  const ExperimentConfig config = load_given_experiment(args, given);
  const RunDirectory run = new_run_folder(args.out, config.output_dir);
  Communicator comm(env, communicator_options(config.distributed, config.device));
  if (comm.is_main()) {
    in_fresh_run_folder(run, "train", [&] {
      const int threads = rank_thread_count(args, config.threads, env);
      spdlog::info("run {} -> {} ({} ranks x {} threads)", config.name, run.root().string(), comm.world_size(),
                   threads);
      Experiment experiment = start_experiment(config, run);
      comm.barrier();  // the tokenizer and model config are in the run folder
      run_training(experiment, run, /*resume=*/false, args, &comm);
    });
    return;
  }
  comm.barrier();
  rank_thread_count(args, config.threads, env);
  Experiment experiment = join_experiment(config, run);
  run_training(experiment, run, /*resume=*/false, args, &comm);
}

// --nproc N: the config is checked here first, so that a mistake in it is
// one line rather than one per rank.
void launch_train_ranks(const RunArgs& args, const ConfigArguments& given) {
  RunArgs launched = args;
  int64_t timeout_seconds = DistributedSection{}.timeout_seconds;
  if (!args.resume.empty()) {
    const RunState state = resumable_run(args.resume, "train");
    if (run_is_done(state.status)) {
      fmt::print("{}", summary_table(state.summary));
      return;
    }
    timeout_seconds = load_experiment(RunDirectory(args.resume).resolved_config()).distributed.timeout_seconds;
  } else {
    const ExperimentConfig config = load_given_experiment(args, given);
    // The ranks get the folder chosen here, so that they all write to it.
    const RunDirectory run = new_run_folder(args.out, config.output_dir);
    check_fresh_run_folder(run.root(), "train");
    launched.out = run.root().string();
    timeout_seconds = config.distributed.timeout_seconds;
  }
  launch_local_ranks("train", launched, timeout_seconds);
}

void run_train(RunArgs& args) {
  const ConfigArguments given = split_config_arguments(args.positional);
  if (!args.resume.empty()) {
    if (!given.path.empty()) throw UserError("give either CONFIG.yaml (a new run) or --resume RUN_DIR, not both");
    if (!given.overrides.empty() || !args.overlays.empty())
      throw UserError("a resumed run keeps its config; key=value overrides and --overlay apply to new runs only");
  } else if (given.path.empty()) {
    throw UserError("train needs CONFIG.yaml (or --resume RUN_DIR)");
  }
  if (args.force && args.resume.empty()) throw UserError("--force goes with --resume");
  const LaunchEnv env = launch_env();
  // A finished run is left to the paths below, which print its table. Rank 0
  // speaks for a data-parallel job: a mistake is one line, not one per rank.
  if (!args.resume.empty() && env.rank == 0)
    check_resume(args, "train", [](const fs::path& file) { return resolved_yaml(load_experiment(file)); });
  if (args.nproc > 0) {
    if (env.distributed())
      throw UserError(fmt::format("--nproc starts its own ranks, but this process is already rank {} of {} ({})",
                                  env.rank, env.world_size, env.launcher));
    launch_train_ranks(args, given);
    return;
  }
  if (env.distributed()) {
    run_train_rank(args, env, given);
    return;
  }
  if (!args.resume.empty()) {
    const RunLock lock(args.resume);  // first: the run's status is read under it
    const RunState state = resumable_run(args.resume, "train");
    if (run_is_done(state.status)) {
      spdlog::info("{} is already finished", args.resume);
      fmt::print("{}", summary_table(state.summary));
      return;
    }
    auto [run, experiment] = open_run(args.resume, /*checkpoint=*/"");
    set_thread_count(args.threads >= 0 ? args.threads : experiment.config.threads);
    run_training(experiment, run, /*resume=*/true, args, nullptr);
    return;
  }
  const ExperimentConfig config = load_given_experiment(args, given);
  const RunDirectory run = new_run_folder(args.out, config.output_dir);
  in_fresh_run_folder(run, "train", [&] {
    const int threads = set_thread_count(config.threads);  // --threads is in it
    spdlog::info("run {} -> {} ({} threads)", config.name, run.root().string(), threads);
    Experiment experiment = start_experiment(config, run);
    run_training(experiment, run, /*resume=*/false, args, nullptr);
  });
}

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
    run_train(*args);
  });
}

}  // namespace mtbert::cli
