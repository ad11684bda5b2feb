// mtbert sweep: expand a sweep file into runs and train them (here, several at
// once, or as a Slurm job array), skipping finished runs and resuming
// interrupted ones.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "cli/cli_checks.h"
#include "cli/commands.h"
#include "cli/path_checks.h"
#include "config/experiment_config.h"
#include "core/atomic_file.h"
#include "core/duration.h"
#include "core/limits.h"
#include "core/runtime.h"
#include "core/thread_count.h"
#include "core/user_error.h"
#include "sweep/slurm_script.h"
#include "sweep/sweep_expansion.h"
#include "sweep/sweep_jobs.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_spec.h"
#include "train/experiment.h"
#include "train/run_directory.h"
#include "train/run_lock.h"
#include "train/run_status.h"

namespace mtbert::cli {

namespace {

namespace fs = std::filesystem;

struct SweepArgs {
  std::vector<std::string> positional;  // SWEEP.yaml and key=value overrides
  int jobs = 1;
  int nproc = 1;         // local ranks per run
  int nodes = 1;         // Slurm: nodes per run
  int gpus_per_run = 0;  // Slurm: ranks (one GPU each) per run
  bool dry_run = false;
  std::string emit;
  std::string out;
  std::vector<std::string> overlays;
  std::vector<std::string> only;  // run names or groups, wildcards allowed
};

struct PlannedRun {
  SweepRun run;
  ExperimentConfig config;
  RunState state;
  RunAction action = RunAction::start;
  std::optional<std::string> config_change;  // for runs that already have a config
};

// The last line of a log worth showing: what a failed run said last.
std::string last_log_line(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty() && line.rfind("===", 0) != 0) last = line;
  return last.empty() ? "(no output)" : last;
}

// "finished  overall 0.7412", or with `where`: "finished elsewhere  overall 0.7412"
std::string outcome_text(const RunState& state, const std::string& where = "") {
  std::string text = run_status_name(state.status) + where;
  const auto best = state.summary.find("best");
  if (run_is_done(state.status) && best != state.summary.end() && best->contains("overall"))
    text += fmt::format("  overall {:.4f}", (*best)["overall"].get<double>());
  return text;
}

// Every run's config, loaded now: a bad key in the last run stops the sweep
// before the first one trains.
std::vector<PlannedRun> plan(const SweepSpec& spec, const std::vector<SweepRun>& runs,
                             const std::vector<fs::path>& overlays) {
  for (size_t i = 0; i < spec.experiments.size(); ++i)
    if (!fs::is_regular_file(spec.experiments[i].path))
      throw UserError(fmt::format("{}: experiments[{}]: {} does not exist", spec.experiments[i].origin.describe(), i,
                                  spec.experiments[i].path.string()));
  std::vector<PlannedRun> planned;
  for (const auto& run : runs) {
    const ExperimentConfig config = load_experiment(run.experiment, run.overrides, overlays);
    PlannedRun p{run, config, inspect_run(run.folder), RunAction::start, std::nullopt};
    p.action = run_action(p.state.status);
    if (p.action != RunAction::restart && p.action != RunAction::start)
      p.config_change = resolved_config_change(run.folder, resolved_yaml(config));
    planned.push_back(std::move(p));
  }
  return planned;
}

bool reads_inputs(const PlannedRun& p) { return p.action == RunAction::start || p.action == RunAction::restart; }

// The device and the files a new run needs first, checked before any run
// starts here (a Slurm script is checked where it runs: its machines have
// the GPUs, and the files may live there only).
void check_inputs_exist(const PlannedRun& p) {
  try {
    check_device_available(p.config.device);
  } catch (const UserError& e) {
    throw UserError(fmt::format("run {}: {}", p.run.name, e.message()));
  }
  if (const auto missing = first_missing_input(p.config))
    throw UserError(fmt::format("run {}: {} does not exist (paths are relative to the folder mtbert runs in, {})",
                                p.run.name, *missing, fs::current_path().string()));
}

// Returns how many runs cannot start (a file they read is missing).
size_t print_listing(const SweepSpec& spec, const fs::path& root, const std::vector<PlannedRun>& planned) {
  size_t cannot_start = 0;
  fmt::print("sweep {} ({}): {} runs under {}\n", spec.name, spec.source.string(), planned.size(), root.string());
  size_t width = 3;
  for (const auto& p : planned) width = std::max(width, p.run.name.size());
  fmt::print("{:<{}}  {:<13}  {:<15}  {}\n", "run", width, "status", "action", "folder and settings");
  for (const auto& p : planned) {
    std::string settings = p.run.folder.string();
    for (const auto& s : p.run.point) settings += " " + shell_quoted(s);
    // A run that would stop at a missing input says so instead of "start".
    const auto missing = reads_inputs(p) ? first_missing_input(p.config) : std::nullopt;
    if (missing) settings += fmt::format("  (missing {})", *missing);
    fmt::print("{:<{}}  {:<13}  {:<15}  {}\n", p.run.name, width, run_status_name(p.state.status),
               missing ? "cannot start" : sweep_action_name(p.action), settings);
    cannot_start += missing ? 1 : 0;
  }
  return cannot_start;
}

void warn_config_changes(const std::vector<PlannedRun>& planned) {
  for (const auto& p : planned)
    if (p.config_change)
      spdlog::warn("{}: its config changed since it was trained ({}); it is kept as it is: remove {} to train it "
                   "again",
                   p.run.name, *p.config_change, p.run.folder.string());
}

void emit_slurm(const SweepSpec& spec, const fs::path& root, const std::vector<PlannedRun>& planned,
                const std::vector<fs::path>& overlays, const SweepArgs& args) {
  std::vector<SweepRun> pending;
  for (const auto& p : planned)
    if (p.action == RunAction::start || p.action == RunAction::restart || p.action == RunAction::resume)
      pending.push_back(p.run);
  if (pending.empty()) {
    fmt::print("nothing to submit: every run of sweep {} is finished or running\n", spec.name);
    return;
  }
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw UserError(fmt::format("cannot create {}: {}", root.string(), ec.message()));
  SlurmScriptOptions options;
  options.executable = fs::read_symlink("/proc/self/exe");
  options.working_directory = fs::current_path();
  options.log_folder = fs::absolute(root).lexically_normal();
  options.command = command_line();
  options.nodes = args.nodes;
  options.gpus_per_run = args.gpus_per_run;
  const fs::path script = root / (spec.name + ".sbatch");
  write_text_atomically(script, slurm_array_script(spec, pending, overlays, options));
  spdlog::info("{} of {} runs as a Slurm job array; submit it with: sbatch [options] {}", pending.size(),
               planned.size(), script.string());
  fmt::print("{}\n", script.string());
}

// The end of the sweep's line: runs by where they stand now (another sweep
// on the same root may still be training some), so that the counts add up.
struct SweepTally {
  size_t finished = 0;
  std::vector<std::string> running;      // by another process
  std::vector<std::string> left_alone;   // unresumable, not touched here
  std::vector<std::string> unfinished;   // failed or interrupted
};

SweepTally tally(const std::vector<PlannedRun>& planned) {
  SweepTally t;
  for (const auto& p : planned) {
    const RunStatus status = inspect_run(p.run.folder).status;
    if (run_is_done(status)) ++t.finished;
    else if (status == RunStatus::running) t.running.push_back(p.run.name);
    else if (status == RunStatus::unresumable) t.left_alone.push_back(p.run.name);
    else t.unfinished.push_back(p.run.name);
  }
  return t;
}

void run_here(const SweepSpec& spec, const std::vector<PlannedRun>& planned, const std::vector<fs::path>& overlays,
              int jobs, int nproc) {
  std::vector<const PlannedRun*> queued;
  size_t skipped = 0, elsewhere = 0, kept = 0;
  for (const auto& p : planned) {
    if (p.action == RunAction::skip) {
      ++skipped;
    } else if (p.action == RunAction::wait) {
      ++elsewhere;
    } else if (p.action == RunAction::keep) {
      ++kept;
      spdlog::warn("{}: checkpoints/last is gone, so it cannot be resumed; it is left as it is with its best "
                   "checkpoint (remove {} to train it again)",
                   p.run.name, p.run.folder.string());
    } else {
      queued.push_back(&p);
    }
  }
  for (const PlannedRun* p : queued)
    if (p->action != RunAction::resume) check_inputs_exist(*p);
  // The machine's cores are shared by the runs trained at once (no more at
  // once than there are runs to train).
  const int parallel = std::max(1, std::min(jobs, static_cast<int>(queued.size())));
  const int threads = std::max(1, available_cores() / (parallel * nproc));
  fmt::print("sweep {}: {} runs: {} to train ({} at a time, {} thread{} each), {} finished{}{}\n", spec.name,
             planned.size(), queued.size(), parallel, threads, threads == 1 ? "" : "s", skipped,
             elsewhere ? fmt::format(", {} running elsewhere (left alone)", elsewhere) : "",
             kept ? fmt::format(", {} without a last checkpoint (left alone)", kept) : "");
  std::fflush(stdout);
  if (queued.empty()) return;

  std::vector<SweepJob> queue;
  std::map<std::string, const PlannedRun*> by_name;
  for (const PlannedRun* p : queued) {
    SweepJob job;
    job.name = p->run.name;
    job.log = RunDirectory(p->run.folder).train_log();
    queue.push_back(std::move(job));
    by_name[p->run.name] = p;
  }

  size_t ended = 0;
  std::vector<std::string> failed;             // failed or interrupted here
  std::map<std::string, RunLock> locks;        // from a run's decision until its child holds the lock
  std::map<std::string, bool> resuming;
  const auto print_line = [&](const std::string& name, const std::string& line) {
    ++ended;
    fmt::print("[{}/{}] {}  {}\n", ended, queue.size(), name, line);
    std::fflush(stdout);
  };
  SweepJobHooks hooks;
  // A run's fate is decided when its turn comes, under its lock, which the
  // child then holds: between the listing and now another sweep on the same
  // root may have started or finished it.
  // A folder that cannot be made, locked or cleared fails that run alone.
  const auto decide = [&](SweepJob& job) {
    const PlannedRun& p = *by_name.at(job.name);
    std::error_code ec;
    fs::create_directories(p.run.folder, ec);  // a lock needs its folder
    if (ec) throw UserError(fmt::format("cannot create {}: {}", p.run.folder.string(), ec.message()));
    auto lock = RunLock::try_lock(p.run.folder);
    if (!lock) {
      print_line(job.name, "running elsewhere (left alone)");
      return false;
    }
    const RunState state = inspect_run(p.run.folder);
    const RunAction action = run_action(state.status);
    if (action == RunAction::skip) {
      print_line(job.name, outcome_text(state, " elsewhere"));
      return false;
    }
    if (action == RunAction::keep) {
      print_line(job.name, "left alone: checkpoints/last is gone, so it cannot be resumed");
      return false;
    }
    // A run to restart is cleared by the `train --out` it gets (under this
    // lock, handed to it), as in a Slurm task.
    job.args = action == RunAction::resume ? resume_arguments(p.run) : start_arguments(p.run, overlays);
    job.args.insert(job.args.end(), {"--threads", std::to_string(threads), "--no-progress"});
    if (nproc > 1) job.args.insert(job.args.end(), {"--nproc", std::to_string(nproc)});
    job.inherited_fd = lock->fd();
    job.environment = {lock->handover_variable()};
    resuming[job.name] = action == RunAction::resume;
    locks.emplace(job.name, std::move(*lock));
    return true;
  };
  hooks.prepare = [&](SweepJob& job) {
    try {
      return decide(job);
    } catch (const UserError& e) {
      failed.push_back(job.name);
      print_line(job.name, "FAILED: " + e.message());
      return false;
    }
  };
  hooks.started = [&](const SweepJob& job) {
    locks.erase(job.name);  // the child holds it now
    spdlog::info("{} {} (log: {})", resuming.at(job.name) ? "resuming" : "starting", job.name, job.log.string());
  };
  hooks.ended = [&](const SweepJob& job, const SweepJobResult& result) {
    const RunState state = inspect_run(by_name.at(job.name)->run.folder);
    const bool stopped = result.exit_code == 128 + SIGINT || result.exit_code == 128 + SIGTERM;
    std::string line;
    if (result.exit_code == 0) {
      line = outcome_text(state);
    } else if (stopped && state.status == RunStatus::interrupted) {
      failed.push_back(job.name);
      line = "interrupted: its checkpoint is saved, the next sweep resumes it";
    } else {
      failed.push_back(job.name);
      line = fmt::format("FAILED (exit {}): {} (log: {})", result.exit_code,
                         result.error.empty() ? last_log_line(job.log) : result.error, job.log.string());
    }
    print_line(job.name, fmt::format("{}  {}", line, format_duration(result.seconds)));
  };
  const int signal = run_sweep_jobs(fs::read_symlink("/proc/self/exe"), queue, parallel, hooks);

  const SweepTally t = tally(planned);
  const auto listed = [](const char* what, const std::vector<std::string>& names) {
    return names.empty() ? std::string() : fmt::format("; {}: {}", what, fmt::join(names, ", "));
  };
  fmt::print("sweep {}: {} of {} runs finished{}{}{}\n", spec.name, t.finished, planned.size(),
             listed("running elsewhere", t.running), listed("left alone (no last checkpoint)", t.left_alone),
             listed("not finished", t.unfinished));
  if (signal != 0) set_exit_code(128 + signal);
  else if (!failed.empty() || !t.unfinished.empty()) set_exit_code(1);
}

void run_sweep(const SweepArgs& args) {
  std::string sweep_path;
  std::vector<std::string> overrides;
  for (const auto& arg : args.positional) {
    if (arg.find('=') != std::string::npos) overrides.push_back(arg);
    else if (sweep_path.empty()) sweep_path = arg;
    else throw UserError(fmt::format("unexpected argument \"{}\" (overrides are key.path=value)", arg));
  }
  if (sweep_path.empty()) throw UserError("sweep needs SWEEP.yaml");
  if (args.emit.empty() && (args.nodes != 1 || args.gpus_per_run != 0))
    throw UserError("--nodes and --gpus-per-run shape the runs of a Slurm script: use them with --emit slurm");
  if (!args.emit.empty() && args.nproc != 1)
    throw UserError("--nproc starts ranks on this machine; in a Slurm script use --gpus-per-run (or --nodes)");
  check_slurm_shape(args.nodes, args.gpus_per_run);
  if (args.emit.empty() && args.jobs * args.nproc > std::max(2, available_cores()))
    throw UserError(fmt::format("--jobs {} x --nproc {} is {} processes on the {} cores this process may use; lower "
                                "--jobs or --nproc",
                                args.jobs, args.nproc, args.jobs * args.nproc, available_cores()));
  const SweepSpec spec = load_sweep(sweep_path);
  const fs::path root = args.out.empty() ? fs::path(spec.output_root) : fs::path(args.out);
  const std::vector<fs::path> overlays(args.overlays.begin(), args.overlays.end());
  const auto all_runs = expand_sweep(spec, root, overrides);
  const auto runs = select_runs(all_runs, args.only, spec.name);
  if (runs.size() < all_runs.size()) spdlog::info("--only: {} of the sweep's {} runs", runs.size(), all_runs.size());
  const auto planned = plan(spec, runs, overlays);
  warn_config_changes(planned);
  if (args.dry_run) {
    // As the sweep itself would, a dry run fails when a run cannot start.
    if (const size_t cannot_start = print_listing(spec, root, planned))
      throw UserError(fmt::format("{} of the {} runs cannot start: a file they read is missing (listed above)",
                                  cannot_start, planned.size()));
    return;
  }
  if (!args.emit.empty()) {
    emit_slurm(spec, root, planned, overlays, args);
    return;
  }
  run_here(spec, planned, overlays, args.jobs, args.nproc);
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "Train a sweep's runs (experiments x grid x seeds): skip finished ones, "
                                          "resume interrupted ones");
  cmd->add_option("sweep", args->positional, "SWEEP.yaml, then key.path=value overrides for every run");
  cmd->add_option("--jobs,-j", args->jobs, "Runs trained at once on this machine, sharing its cores")
      ->check(whole_number(1, limits::kConfigThreads));
  cmd->add_option("--nproc", args->nproc, "Data-parallel ranks per run on this machine (mtbert train --nproc)")
      ->check(local_rank_count());
  cmd->add_option("--nodes", args->nodes, "With --emit slurm: nodes per run (data-parallel over them)")
      ->check(whole_number(1, limits::kRanks));
  cmd->add_option("--gpus-per-run", args->gpus_per_run,
                  "With --emit slurm: ranks per run, one GPU each (one srun per run with that many tasks)")
      ->check(whole_number(0, limits::kRanks));
  cmd->add_flag("--dry-run", args->dry_run, "List the runs, their status and what the sweep would do; train nothing");
  cmd->add_option("--emit", args->emit, "Write a job script instead of training: slurm (an sbatch job array)")
      ->check(CLI::IsMember({"slurm"}));
  cmd->add_option("--out", args->out, "Folder of the run folders (default: the sweep's output_root)")
      ->check(folder_or_absent());
  cmd->add_option("--only", args->only,
                  "Only the runs of this name, or of this name without -seed<N> (shell wildcards * ? [..]); "
                  "repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--overlay", args->overlays,
                  "YAML file merged over every run's experiment (after its extends, before overrides); repeatable")
      ->check(existing_file())
      ->allow_extra_args(false);
  cmd->callback([args] { run_sweep(*args); });
}

}  // namespace mtbert::cli
