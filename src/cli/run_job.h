#pragma once
// One runner for the commands that train a run folder, train and pretrain:
// as one process, as one rank of a data-parallel job (torchrun, srun, or a
// child of --nproc) or as the --nproc launcher of such ranks; a new run or a
// resumed one. Each command describes its kind of run, a `Kind`:
//
//   using Config, Job, Trainer;   its config, what trains (built from the
//                                 config and run folder), and its trainer
//   command, config_file          "train", "CONFIG.yaml": its wording
//   load(file, overrides, overlays)  its config file read (load_experiment, ...)
//   start(config, run)            rank 0 of a new run: writes the run's files
//   join(config, run)             the other ranks of a new run: read them
//   reopen(run)                   a run to resume, rebuilt from its folder
//   print_result(summary, run)    what rank 0 prints when the run ends
//   print_finished(state)         what a resume of a finished run prints
//
// Everything else (the run folder's checks and lock, the ranks, the resume
// checks, the wording) is written here once.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <optional>

#include "cli/commands.h"
#include "cli/run_folders.h"
#include "cli/run_inputs.h"
#include "cli/run_ranks.h"
#include "core/thread_count.h"
#include "core/user_error.h"
#include "dist/communicator.h"
#include "dist/launch_env.h"
#include "train/experiment.h"
#include "train/interrupt.h"
#include "train/run_directory.h"
#include "train/run_lock.h"
#include "train/run_status.h"
#include "train/trainer.h"

namespace mtbert::cli {

namespace run_job_detail {

// A new run's config. --threads is recorded as the run's `threads`
// (config.resolved.yaml), so that the record says what the run used and a
// resume without it uses the same. The device and the files the run reads are
// checked before the run folder, the tokenizer, the data or the ranks start:
// a missing file is named with its key.
template <class Kind>
typename Kind::Config load_new(const RunArgs& args, const ConfigArguments& given) {
  const std::vector<std::filesystem::path> overlays(args.overlays.begin(), args.overlays.end());
  typename Kind::Config config = Kind::load(given.path, given.overrides, overlays);
  if (args.threads >= 0) config.threads = args.threads;
  check_device_available(config.device);
  check_run_inputs(given.path, config.model.pretrained, first_missing_input(config));
  return config;
}

// A run folder's config.resolved.yaml.
template <class Kind>
typename Kind::Config load_resolved(const std::filesystem::path& file) {
  return Kind::load(file, {}, {});
}

// That file in canonical form, to compare with the config of a resume (check_resume).
template <class Kind>
std::string canonical(const std::filesystem::path& file) {
  return resolved_yaml(load_resolved<Kind>(file));
}

// Trains `job` in `run` to its end, or to a stop signal (exit code 128 + N).
template <class Kind>
void train_to_end(typename Kind::Job& job, const RunDirectory& run, bool resume, const RunArgs& args,
                  Communicator* comm) {
  const bool main_rank = !comm || comm->is_main();
  typename Kind::Trainer trainer(job, run, comm);
  if (resume) trainer.restore_last_checkpoint();
  install_stop_signal_handlers();
  TrainerHooks hooks;
  hooks.stop_requested = [] { return stop_requested(); };
  hooks.show_progress = !args.no_progress && main_rank;
  if (!resume && main_rank)
    run.write_summary({{"name", job.config.name},
                       {"status", "running"},
                       {"command", args.command},
                       {"working_directory", job.working_directory.string()}});
  const TrainEnd end = trainer.train(hooks);
  const auto summary = trainer.finish(end, args.command);
  if (end == TrainEnd::interrupted) {
    // A rank stopped by another rank's signal ends as if it had had SIGTERM.
    set_exit_code(128 + (stop_signal() != 0 ? stop_signal() : SIGTERM));
    return;
  }
  if (main_rank) Kind::print_result(summary, run);
}

template <class Kind>
void tell_finished(const RunArgs& args, const RunState& state) {
  spdlog::info("{} is already finished", args.resume);
  Kind::print_finished(state);
}

template <class Kind>
void start_logged(const typename Kind::Config& config, const RunDirectory& run, int ranks, int threads) {
  spdlog::info("run {} -> {} ({})", config.name, run.root().string(),
               ranks > 1 ? fmt::format("{} ranks x {} threads", ranks, threads) : fmt::format("{} threads", threads));
}

// One process: the run trains here.
template <class Kind>
void run_here(const RunArgs& args, const ConfigArguments& given) {
  if (!args.resume.empty()) {
    const auto [lock, state] = lock_to_resume(args.resume, Kind::command);
    if (run_is_done(state.status)) return tell_finished<Kind>(args, state);
    check_resume(args, canonical<Kind>);
    const RunDirectory run(args.resume);
    typename Kind::Job job = Kind::reopen(run);
    set_thread_count(args.threads >= 0 ? args.threads : job.config.threads);
    train_to_end<Kind>(job, run, /*resume=*/true, args, nullptr);
    return;
  }
  const typename Kind::Config config = load_new<Kind>(args, given);
  const RunDirectory run = new_run_folder(args.out, config.output_dir);
  in_fresh_run_folder(run, Kind::command, [&] {
    start_logged<Kind>(config, run, 1, set_thread_count(config.threads));  // --threads is in it
    typename Kind::Job job = Kind::start(config, run);
    train_to_end<Kind>(job, run, /*resume=*/false, args, nullptr);
  });
}

// One rank of a data-parallel job (torchrun, srun, --nproc): rank 0 owns the
// run folder (creates, locks and writes it); the others read what it wrote.
template <class Kind>
void run_rank(const RunArgs& args, const LaunchEnv& env, const ConfigArguments& given) {
  if (env.rank > 0) spdlog::set_level(spdlog::level::warn);  // rank 0 speaks for the job
  if (!args.resume.empty()) {
    const RunDirectory run(args.resume);
    const typename Kind::Config config = load_resolved<Kind>(run.resolved_config());
    Communicator comm(env, communicator_options(config.distributed, config.device));
    std::optional<RunLock> lock;
    bool done = false;
    if (comm.is_main()) {
      auto [held, state] = lock_to_resume(args.resume, Kind::command);
      lock.emplace(std::move(held));
      done = run_is_done(state.status);
      if (done) tell_finished<Kind>(args, state);
      else check_resume(args, canonical<Kind>);
    }
    if (comm.any(done)) return;
    typename Kind::Job job = Kind::reopen(run);
    rank_thread_count(args, job.config.threads, env);
    train_to_end<Kind>(job, run, /*resume=*/true, args, &comm);
    return;
  }
  const typename Kind::Config config = load_new<Kind>(args, given);
  const RunDirectory run = new_run_folder(args.out, config.output_dir);
  Communicator comm(env, communicator_options(config.distributed, config.device));
  if (comm.is_main()) {
    in_fresh_run_folder(run, Kind::command, [&] {
      start_logged<Kind>(config, run, comm.world_size(), rank_thread_count(args, config.threads, env));
      typename Kind::Job job = Kind::start(config, run);
      comm.barrier();  // the run's tokenizer and model config are in its folder
      train_to_end<Kind>(job, run, /*resume=*/false, args, &comm);
    });
    return;
  }
  comm.barrier();
  rank_thread_count(args, config.threads, env);
  typename Kind::Job job = Kind::join(config, run);
  train_to_end<Kind>(job, run, /*resume=*/false, args, &comm);
}

// --nproc N: the run is checked here first, so that a mistake is one line
// rather than one per rank; the ranks get the folder chosen here.
template <class Kind>
void launch(const RunArgs& args, const ConfigArguments& given) {
  RunArgs launched = args;
  int64_t timeout_seconds = 0;
  if (!args.resume.empty()) {
    const RunState state = resumable_run(args.resume, Kind::command);  // the lock is rank 0's
    if (run_is_done(state.status)) return tell_finished<Kind>(args, state);
    check_resume(args, canonical<Kind>);
    timeout_seconds = load_resolved<Kind>(RunDirectory(args.resume).resolved_config()).distributed.timeout_seconds;
  } else {
    const typename Kind::Config config = load_new<Kind>(args, given);
    const RunDirectory run = new_run_folder(args.out, config.output_dir);
    check_fresh_run_folder(run.root(), Kind::command);
    launched.out = run.root().string();
    timeout_seconds = config.distributed.timeout_seconds;
  }
  launch_local_ranks(Kind::command, launched, timeout_seconds);
}

}  // namespace run_job_detail

// `mtbert <Kind::command>` with its arguments: one process, one rank, or the
// --nproc launcher, as the arguments and the environment say.
template <class Kind>
void run_job(const RunArgs& args) {
  const ConfigArguments given = split_config_arguments(args.positional);
  if (!args.resume.empty()) {
    if (!given.path.empty())
      throw UserError(fmt::format("give either {} (a new run) or --resume RUN_DIR, not both", Kind::config_file));
    if (!given.overrides.empty() || !args.overlays.empty())
      throw UserError("a resumed run keeps its config; key=value overrides and --overlay apply to new runs only");
  } else if (given.path.empty()) {
    throw UserError(fmt::format("{} needs {} (or --resume RUN_DIR)", Kind::command, Kind::config_file));
  }
  if (args.force && args.resume.empty()) throw UserError("--force goes with --resume");
  const LaunchEnv env = launch_env();
  if (args.nproc > 0) {
    if (env.distributed())
      throw UserError(fmt::format("--nproc starts its own ranks, but this process is already rank {} of {} ({})",
                                  env.rank, env.world_size, env.launcher));
    return run_job_detail::launch<Kind>(args, given);
  }
  if (env.distributed()) return run_job_detail::run_rank<Kind>(args, env, given);
  run_job_detail::run_here<Kind>(args, given);
}

}  // namespace mtbert::cli
