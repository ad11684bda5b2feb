// mtbert pretrain: masked-language-model pretraining from YAML
// (experiments/pretrain/), or the resumption of an interrupted run.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <filesystem>
#include <optional>

#include "cli/cli_checks.h"
#include "cli/commands.h"
#include "cli/path_checks.h"
#include "cli/run_folders.h"
#include "cli/run_inputs.h"
#include "cli/run_ranks.h"
#include "config/pretrain_config.h"
#include "core/runtime.h"
#include "core/thread_count.h"
#include "core/user_error.h"
#include "dist/communicator.h"
#include "dist/launch_env.h"
#include "train/experiment.h"
#include "train/interrupt.h"
#include "train/pretrainer.h"
#include "train/run_lock.h"
#include "train/run_status.h"

namespace mtbert::cli {

namespace {

namespace fs = std::filesystem;

void run_pretraining(Pretraining& pretraining, const RunDirectory& run, bool resume, const RunArgs& args,
                     Communicator* comm) {
  const bool main_rank = !comm || comm->is_main();
  Pretrainer trainer(pretraining, run, comm);
  if (resume) trainer.restore_last_checkpoint();
  install_stop_signal_handlers();
  TrainerHooks hooks;
  hooks.stop_requested = [] { return stop_requested(); };
  hooks.show_progress = !args.no_progress && main_rank;
  if (!resume && main_rank)
    run.write_summary({{"name", pretraining.config.name},
                       {"status", "running"},
                       {"command", args.command},
                       {"working_directory", pretraining.working_directory.string()}});
  const TrainEnd end = trainer.train(hooks);
  const auto summary = trainer.finish(end, args.command);
  if (end == TrainEnd::interrupted) {
    // A rank stopped by another rank's signal ends as if it had had SIGTERM.
    set_exit_code(128 + (stop_signal() != 0 ? stop_signal() : SIGTERM));
    return;
  }
  if (!main_rank) return;
  const auto& last = summary["last"];
  if (last.contains("dev"))
    fmt::print("held-out MLM: loss {:.4f}  accuracy {:.4f}  perplexity {:.2f}\n",
               last["dev"]["mlm"]["loss"].get<double>(), last["dev"]["mlm"]["accuracy"].get<double>(),
               last["dev"]["mlm"]["perplexity"].get<double>());
  fmt::print("model folder: {}\n", summary["model_folder"].get<std::string>());
}

// --threads is recorded as the run's `threads` (config.resolved.yaml), so that
// the record says what the run used and a resume without it uses the same.
PretrainConfig load_given_config(const RunArgs& args, const ConfigArguments& given) {
  PretrainConfig config = load_pretrain_config(given.path, given.overrides,
                                               std::vector<fs::path>(args.overlays.begin(), args.overlays.end()));
  if (args.threads >= 0) config.threads = args.threads;
  check_device_available(config.device);  // before the run folder, tokenizer or corpus
  check_run_inputs(given.path, config.model.pretrained, first_missing_input(config));
  return config;
}

RunDirectory run_folder(const RunArgs& args, const PretrainConfig& config) {
  return new_run_folder(args.out, config.output_dir);
}

// One rank of a data-parallel job (torchrun, srun, --nproc): rank 0 owns the
// run folder (creates, locks and writes it); the others read what it wrote.
void run_pretrain_rank(const RunArgs& args, const LaunchEnv& env, const ConfigArguments& given) {
  if (env.rank > 0) spdlog::set_level(spdlog::level::warn);  // rank 0 speaks for the job
  if (!args.resume.empty()) {
    const RunDirectory run(args.resume);
    const PretrainConfig config = load_pretrain_config(run.resolved_config());
    Communicator comm(env, communicator_options(config.distributed, config.device));
    std::optional<RunLock> lock;
    bool done = false;
    if (comm.is_main()) {
      lock.emplace(args.resume);  // first: the run's status is read under it
      done = run_is_done(resumable_run(args.resume, "pretrain").status);
      if (done) spdlog::info("{} is already finished", args.resume);
    }
    if (comm.any(done)) return;
    Pretraining pretraining = reopen_pretraining(run);
    rank_thread_count(args, pretraining.config.threads, env);
    run_pretraining(pretraining, run, /*resume=*/true, args, &comm);
    return;
  }
  const PretrainConfig config = load_given_config(args, given);
  const RunDirectory run = run_folder(args, config);
  Communicator comm(env, communicator_options(config.distributed, config.device));
  if (comm.is_main()) {
    in_fresh_run_folder(run, "pretrain", [&] {
      const int threads = rank_thread_count(args, config.threads, env);
      spdlog::info("pretraining {} -> {} ({} ranks x {} threads)", config.name, run.root().string(),
                   comm.world_size(), threads);
      Pretraining pretraining = start_pretraining(config, run);
      comm.barrier();  // the tokenizer and model config are in the run folder
      run_pretraining(pretraining, run, /*resume=*/false, args, &comm);
    });
    return;
  }
  comm.barrier();
  rank_thread_count(args, config.threads, env);
  Pretraining pretraining = join_pretraining(config, run);
  run_pretraining(pretraining, run, /*resume=*/false, args, &comm);
}

// --nproc N: the config is checked here first, so that a mistake in it is
// one line rather than one per rank.
void launch_pretrain_ranks(const RunArgs& args, const ConfigArguments& given) {
  RunArgs launched = args;
  int64_t timeout_seconds = DistributedSection{}.timeout_seconds;
  if (!args.resume.empty()) {
    if (run_is_done(resumable_run(args.resume, "pretrain").status)) {
      spdlog::info("{} is already finished", args.resume);
      return;
    }
    timeout_seconds = load_pretrain_config(RunDirectory(args.resume).resolved_config()).distributed.timeout_seconds;
  } else {
    const PretrainConfig config = load_given_config(args, given);
    // The ranks get the folder chosen here, so that they all write to it.
    const RunDirectory run = run_folder(args, config);
    check_fresh_run_folder(run, "pretrain");
    launched.out = run.root().string();
    timeout_seconds = config.distributed.timeout_seconds;
  }
  launch_local_ranks("pretrain", launched, timeout_seconds);
}

void run_pretrain(const RunArgs& args) {
  const ConfigArguments given = split_config_arguments(args.positional);
  if (!args.resume.empty()) {
    if (!given.path.empty() || !given.overrides.empty() || !args.overlays.empty())
      throw UserError("a resumed run keeps its config: give --resume RUN_DIR alone");
  } else if (given.path.empty()) {
    throw UserError("pretrain needs PRETRAIN.yaml (or --resume RUN_DIR)");
  }
  if (args.force && args.resume.empty()) throw UserError("--force goes with --resume");
  const LaunchEnv env = launch_env();
  // A finished run is left to the paths below, which say so. Rank 0 speaks
  // for a data-parallel job (see train's).
  if (!args.resume.empty() && env.rank == 0)
    check_resume(args, "pretrain", [](const fs::path& file) { return resolved_yaml(load_pretrain_config(file)); });
  if (args.nproc > 0) {
    if (env.distributed())
      throw UserError(fmt::format("--nproc starts its own ranks, but this process is already rank {} of {} ({})",
                                  env.rank, env.world_size, env.launcher));
    launch_pretrain_ranks(args, given);
    return;
  }
  if (env.distributed()) {
    run_pretrain_rank(args, env, given);
    return;
  }
  if (!args.resume.empty()) {
    const RunLock lock(args.resume);  // first: the run's status is read under it
    if (run_is_done(resumable_run(args.resume, "pretrain").status)) {
      spdlog::info("{} is already finished", args.resume);
      return;
    }
    const RunDirectory run(args.resume);
    Pretraining pretraining = reopen_pretraining(run);
    set_thread_count(args.threads >= 0 ? args.threads : pretraining.config.threads);
    run_pretraining(pretraining, run, /*resume=*/true, args, nullptr);
    return;
  }
  const PretrainConfig config = load_given_config(args, given);
  const RunDirectory run = run_folder(args, config);
  in_fresh_run_folder(run, "pretrain", [&] {
    const int threads = set_thread_count(config.threads);  // --threads is in it
    spdlog::info("pretraining {} -> {} ({} threads)", config.name, run.root().string(), threads);
    Pretraining pretraining = start_pretraining(config, run);
    run_pretraining(pretraining, run, /*resume=*/false, args, nullptr);
  });
}

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
    run_pretrain(*args);
  });
}

}  // namespace mtbert::cli
