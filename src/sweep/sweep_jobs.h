#pragma once
// Runs a sweep's `mtbert train` commands on this machine, several at once, as
// child processes. Each child gets its own process group, so that a Ctrl-C in
// the terminal reaches only the sweep, which then passes exactly one signal on
// to every running child: each saves a checkpoint and stops (a second Ctrl-C
// is passed on too and stops them at once), and a later sweep resumes them.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace mtbert {

struct SweepJob {
  std::string name;
  std::filesystem::path log;      // stdout and stderr are appended here (its folder is created)
  std::vector<std::string> args;  // after the executable
  // A descriptor this child inherits (others started meanwhile do not), and
  // variables added to its environment: how a run's lock is handed to it
  // (train/run_lock.h).
  int inherited_fd = -1;
  std::vector<std::string> environment;
};

struct SweepJobResult {
  int exit_code = 0;  // the exit status; 128 + N when signal N ended it; 127 when it could not start
  double seconds = 0;
  std::string error;  // why it could not start
};

struct SweepJobHooks {
  // Called when a job's turn comes, just before it would start: it may fill
  // in the job (its arguments, what it inherits), or return false to pass it
  // over (its fate is settled: the hook says so). Absent: every job starts.
  std::function<bool(SweepJob&)> prepare;
  // Called after a job started (or failed to: then `ended` follows at once).
  std::function<void(const SweepJob&)> started;
  std::function<void(const SweepJob&, const SweepJobResult&)> ended;
};

// Runs `executable args...` for the jobs in order, at most `parallel` at a
// time, stdin from /dev/null; each log first gets a line with the time and
// the command. The hooks are called from this thread; `jobs` are prepared in
// place. On SIGINT or SIGTERM no
// further job starts and the running ones get the signal; returns once all
// have ended, with the signal that stopped the sweep (0: none).
int run_sweep_jobs(const std::filesystem::path& executable, std::vector<SweepJob>& jobs, int parallel,
                   const SweepJobHooks& hooks);

}  // namespace mtbert
