#pragma once
// What a sweep does with each of its runs, from the run folder's status, and
// the `mtbert train` command lines that do it: the same commands whether the
// sweep runs them here (sweep_jobs.h) or a cluster does (slurm_script.h).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sweep/sweep_expansion.h"
#include "train/run_status.h"

namespace mtbert {

enum class SweepAction {
  skip,     // finished or early-stopped: nothing to do
  wait,     // another process trains it now: left alone
  keep,     // cannot be resumed, and its best checkpoint is worth keeping: left alone
  resume,   // interrupted: mtbert train --resume
  restart,  // failed before its first checkpoint: cleared (train.log kept) and started again
  start,    // missing: mtbert train
};

const char* sweep_action_name(SweepAction action);
SweepAction action_for(RunStatus status);

// `train EXPERIMENT --overlay O... OVERRIDES... --out FOLDER`: a new run.
std::vector<std::string> start_arguments(const SweepRun& run, const std::vector<std::filesystem::path>& overlays);
// `train --resume FOLDER`.
std::vector<std::string> resume_arguments(const SweepRun& run);

// Empties the folder of a run that failed before its first checkpoint, all
// but train.log (which keeps the failed attempt's output).
void clear_for_restart(const std::filesystem::path& folder);

// When `folder` holds a config.resolved.yaml that differs from `resolved`
// (what the sweep would write now), the first differing line of each; a run
// trained under an older version of its experiment file is then reported, not
// retrained.
std::optional<std::string> resolved_config_change(const std::filesystem::path& folder, const std::string& resolved);

}  // namespace mtbert
