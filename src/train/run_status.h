#pragma once
// Where a run folder stands, read from the folder alone, and what may be done
// with it: the one place that knows. mtbert train and pretrain (a new run, or
// --resume), mtbert sweep (each run's action, decided when its turn comes,
// under its lock), the Slurm script (through `mtbert status`) and mtbert
// report all ask here.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/run_lock.h"

namespace mtbert {

enum class RunStatus {
  missing,        // nothing trained there yet: no folder, or no config.resolved.yaml
  running,        // a process is training in it now (it holds the run lock)
  interrupted,    // stopped with a checkpoint to resume from (checkpoints/last)
  failed,         // started, but stopped before its first checkpoint: only a restart helps
  unresumable,    // checkpoints/best, and checkpoints/last removed after it was written: kept, never cleared
  finished,       // summary.json: finished
  early_stopped,  // summary.json: early_stopped
};

const char* run_status_name(RunStatus status);

// finished or early_stopped: the run has its final metrics.
inline bool run_is_done(RunStatus status) {
  return status == RunStatus::finished || status == RunStatus::early_stopped;
}

// What may be done with a run folder in each status: by a sweep, a Slurm
// task, or `mtbert train --out` / `--resume` (which refuse the rest).
enum class RunAction {
  skip,     // finished or early-stopped: nothing to do
  wait,     // another process trains it now: left alone
  keep,     // cannot be resumed, and its best checkpoint is worth keeping: left alone
  resume,   // interrupted: continued from checkpoints/last
  restart,  // failed before its first checkpoint: cleared (train.log kept) and started again
  start,    // missing: a new run
};

RunAction run_action(RunStatus status);
// One word per action (the names above), as `mtbert status` prints it.
const char* run_action_name(RunAction action);

struct RunState {
  RunStatus status = RunStatus::missing;
  nlohmann::json summary = nlohmann::json::object();  // summary.json, or {}
  // The run's tags: summary.json's, or config.resolved.yaml's for a run that
  // has not finished.
  std::vector<std::string> tags;
};

RunState inspect_run(const std::filesystem::path& folder);

// The state of a run folder given to `mtbert <command> --resume` (command:
// train or pretrain): finished runs are returned as they are (nothing to do);
// UserError for a run of the other command (naming the command to use), one
// being trained, one without a checkpoint, or not a run folder.
RunState resumable_run(const std::string& folder, const std::string& command);

// What a process that resumes the run in `folder` starts with: the run's
// lock, and its state read under it (resumable_run's). A folder that is no
// run folder is refused before it gets a run.lock.
std::pair<RunLock, RunState> lock_to_resume(const std::string& folder, const std::string& command);

// UserError unless `folder` may receive a new run of `command`: it does not
// exist, holds only what an unstarted run leaves (train.log, run.lock, empty
// checkpoints/ and predictions/), or holds a run that failed before its first
// checkpoint (what that left is cleared). An unfinished run names
// `mtbert <command> --resume`.
void check_fresh_run_folder(const std::filesystem::path& folder, const std::string& command);

// What a resume command needs besides the folder: " --nproc N" for a run of
// N > 1 data-parallel ranks (it resumes with as many), else nothing.
std::string resume_ranks_hint(int world_size);

}  // namespace mtbert
